"""Sub-center ArcFace (Deng et al. 2020): ArcFace on the closest of K sub-centers per class."""

import math

import keras
from keras import ops

from keras_dml.losses.additive_margin import arcface_target_logit, check_scale_and_margin
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
    """Sub-center ArcFace: ArcFace with each class's cosine the largest over its K sub-centers.

    `cos(theta_c) = max_k cos(x, w_{c,k})` (Eq. 2 of the paper), then ArcFace's
    `l(x, y) = -log( e^{s cos(theta_y + m)} / (e^{s cos(theta_y + m)}
    + sum_{c != y} e^{s cos(theta_c)}) )`, averaged over the batch, with ArcFace's fallback
    `cos(theta) - m sin(m)` for `theta_y > pi - m` (see `arcface_target_logit`). With
    `num_sub_centers=1` it is `arcface_loss`.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`; others raise a `ValueError` in an eager
            call and give a NaN loss inside a traced graph.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        class_weights: float tensor `[C * K, D]`. The sub-centers; rows `c*K .. c*K + K - 1`
            belong to class `c` (normalised inside).
        num_sub_centers: int >= 1. `K`. Defaults to `3` (the paper's choice).
        scale: float. Feature scale `s`. Defaults to `64.0`.
        margin: float. Angular margin `m` in radians, in `[0, pi/2)`. Defaults to `0.5`.
        easy_margin: bool. Apply the margin only for `theta_y < pi/2`. Defaults to `False`.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_samples)`; 0.0 for an empty batch, NaN when an embedding
        holds NaN or Inf.

    Examples:
    >>> weights = keras.random.normal((10 * 3, 8))  # 10 classes, 3 sub-centers each
    >>> loss = subcenter_arcface_loss([0, 3, 3, 7], keras.random.normal((4, 8)), weights)

    References:
        Deng, Guo, Liu, Gong, Zafeiriou, "Sub-center ArcFace: Boosting Face Recognition by
        Large-scale Noisy Web Faces", ECCV 2020, Eq. 2 (K = 3, s = 64, m = 0.5).
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
    target_cosine = ops.sum(targets * cosine, axis=1)
    target_logit = arcface_target_logit(target_cosine, margin, easy_margin)
    logits = scale * (cosine + targets * ops.expand_dims(target_logit - target_cosine, 1))
    per_sample = ops.logsumexp(logits, axis=1) - scale * target_logit
    loss, count = mean_over_samples(per_sample, invalid)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("subcenter_arcface")
@keras.saving.register_keras_serializable(package="keras_dml")
class SubCenterArcFaceLoss(ClassWeightLoss):
    """Sub-center ArcFace loss as a layer owning `num_classes * num_sub_centers` class weights.

    A class loss: its weights are a `[num_classes * num_sub_centers, dim]` variable (rows
    `c*K .. c*K + K - 1` are class `c`'s sub-centers), so an ensemble gives each learner its own
    sub-centers by slicing the columns, as for ArcFace. No learning-rate multiplier is
    recommended (the paper trains the weights with the network). Pass it to
    `EmbeddingModel.compile(loss=...)`: the model then owns the layer.

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        num_sub_centers: int >= 1. Sub-centers per class `K`. Defaults to `3`.
        scale: float. Feature scale `s`. Defaults to `64.0`.
        margin: float. Angular margin in radians, in `[0, pi/2)`. Defaults to `0.5`.
        easy_margin: bool. Apply the margin only for angles below 90 degrees.
            Defaults to `False`.
        weights_initializer: initializer of the weights. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_samples)`.

    Examples:
    >>> loss_layer = SubCenterArcFaceLoss(num_classes=100, embedding_dim=128)
    >>> model.compile(optimizer="adam", loss=loss_layer)  # model: an EmbeddingModel

    References:
        Deng et al., "Sub-center ArcFace: Boosting Face Recognition by Large-scale Noisy Web
        Faces", ECCV 2020, Eq. 2.
    """

    WEIGHTS_NAME = "class_weights"
    LOSS_ARGUMENTS = ("num_sub_centers", "scale", "margin", "easy_margin")
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
        kwargs.setdefault("name", "subcenter_arcface_loss")
        super().__init__(num_classes, embedding_dim, **kwargs)
        self.scale = float(scale)
        self.margin = float(margin)
        self.easy_margin = bool(easy_margin)

    def build(self, labels_shape=None, embeddings_shape=None):
        self.class_weights = self.add_weight(
            name=self.WEIGHTS_NAME,
            shape=(self.num_classes * self.num_sub_centers, self.embedding_dim),
            initializer=self.weights_initializer,
            dtype="float32",
            trainable=True,
            autocast=False,
        )
