"""Sub-center ArcFace (Deng et al. 2020): ArcFace on the closest of K sub-centers per class."""

import math

import keras
from keras import ops

from keras_dml.losses.additive_margin import (
    arcface_target_logit,
    check_scale_and_margin,
    margin_softmax,
)
from keras_dml.losses.class_weights import ClassWeightLoss, mean_over_samples
from keras_dml.losses.multi_center import (
    center_cosines,
    check_centers_per_class,
    prepare_multi_center_inputs,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import one_hot_in_range
from keras_dml.pairs.reduction import finish


def subcenter_arcface_loss(
    labels,
    embeddings,
    class_weights,
    num_sub_centers=3,
    scale=64.0,
    margin=0.5,
    easy_margin=False,
    return_count=False,
):
    """Sub-center ArcFace: ArcFace on each class's largest cosine over its `K` sub-centers.

    Args:
        class_weights: float tensor `[C * K, D]`; class `c`'s in rows `c*K .. c*K + K - 1`.
        num_sub_centers: int >= 1. `K`. Defaults to `3`.
        scale, margin, easy_margin: as `arcface_loss`'s.

    References:
        Deng, Guo, Liu, Gong, Zafeiriou, "Sub-center ArcFace: Boosting Face Recognition by
        Large-scale Noisy Web Faces", ECCV 2020, Eq. 2.
    """
    check_scale_and_margin(scale, margin, max_margin=math.pi / 2)
    labels, embeddings, class_weights, num_sub_centers, num_classes, invalid = (
        prepare_multi_center_inputs(
            labels, embeddings, class_weights, num_sub_centers, ("class_weights", "num_sub_centers")
        )
    )
    # `initial` below every cosine: a max over an empty batch is defined (TensorFlow's is not).
    cosine = ops.max(
        center_cosines(embeddings, class_weights, num_sub_centers), axis=2, initial=-2.0
    )
    targets = one_hot_in_range(labels, num_classes)
    per_sample = margin_softmax(
        cosine, targets, scale, lambda c: arcface_target_logit(c, margin, easy_margin)
    )
    loss, count = mean_over_samples(per_sample, invalid)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("subcenter_arcface")
@keras.saving.register_keras_serializable(package="keras_dml")
class SubCenterArcFaceLoss(ClassWeightLoss):
    """Sub-center ArcFace loss as a layer owning `num_classes * num_sub_centers` class weights.

    Takes `subcenter_arcface_loss`'s hyper-parameters and `ClassWeightLoss`'s arguments.
    """

    LOSS_ARGUMENTS = ("num_sub_centers", "scale", "margin", "easy_margin")
    VECTORS_PER_CLASS = "num_sub_centers"
    loss_fn = staticmethod(subcenter_arcface_loss)

    def __init__(
        self,
        num_classes=None,
        embedding_dim=None,
        num_sub_centers=3,
        scale=64.0,
        margin=0.5,
        easy_margin=False,
        **kwargs,
    ):
        check_scale_and_margin(scale, margin, max_margin=math.pi / 2)
        self.num_sub_centers = check_centers_per_class(num_sub_centers)
        self.scale = float(scale)
        self.margin = float(margin)
        self.easy_margin = bool(easy_margin)
        super().__init__(num_classes, embedding_dim, **{"name": "subcenter_arcface_loss", **kwargs})
