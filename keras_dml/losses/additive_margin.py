"""Additive margin softmax losses: ArcFace (angular margin) and CosFace (cosine margin)."""

import math

import keras
from keras import ops

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    cosine_logits,
    mean_over_samples,
    prepare_class_inputs,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import one_hot_in_range, safe_sqrt
from keras_dml.pairs.reduction import finish


def margin_softmax(cosine, targets, scale, target_logit_fn):
    """Per-sample cross-entropy `[B]` on `scale * cosine`, the target's `target_logit_fn(cos)`."""
    target_cosine = ops.sum(targets * cosine, axis=1)
    target_logit = target_logit_fn(target_cosine)
    logits = scale * (cosine + targets * ops.expand_dims(target_logit - target_cosine, 1))
    return ops.logsumexp(logits, axis=1) - scale * target_logit


def margin_softmax_loss(labels, embeddings, class_weights, scale, target_logit_fn):
    """`(loss, num_samples)` of `margin_softmax` on the cosines to the class weights `[C, D]`."""
    labels, embeddings, class_weights, invalid = prepare_class_inputs(
        labels, embeddings, class_weights
    )
    cosine = cosine_logits(embeddings, class_weights)
    targets = one_hot_in_range(labels, class_weights.shape[0])
    return mean_over_samples(margin_softmax(cosine, targets, scale, target_logit_fn), invalid)


def check_scale_and_margin(scale, margin, max_margin=None):
    """Raises a `ValueError` for a non-positive scale or a margin outside `[0, max_margin)`."""
    if scale <= 0:
        raise ValueError(f"`scale` must be > 0. Received: scale={scale}")
    if margin < 0 or (max_margin is not None and margin >= max_margin):
        bound = "" if max_margin is None else f" and < {max_margin:.4f} (pi/2 radians)"
        raise ValueError(f"`margin` must be >= 0{bound}. Received: margin={margin}")


def arcface_target_logit(cosine, margin=0.5, easy_margin=False):
    """`cos(theta + m)` for target cosines, `cos(theta) - m sin(m)` beyond `theta = pi - m`.

    With `easy_margin` the margin applies only where `cos(theta) > 0`.
    """
    # (1 - c)(1 + c) instead of 1 - c^2: no cancellation near c = 1 in float32.
    cosine = ops.convert_to_tensor(cosine, "float32")
    sine = safe_sqrt(ops.maximum((1.0 - cosine) * (1.0 + cosine), 0.0))
    with_margin = cosine * math.cos(margin) - sine * math.sin(margin)
    if easy_margin:
        return ops.where(cosine > 0.0, with_margin, cosine)
    keeps_monotonic = cosine >= math.cos(math.pi - margin)
    return ops.where(keeps_monotonic, with_margin, cosine - margin * math.sin(margin))


def arcface_loss(
    labels,
    embeddings,
    class_weights,
    scale=64.0,
    margin=0.5,
    easy_margin=False,
    return_count=False,
):
    """ArcFace: softmax cross-entropy on `s cos(theta)`, the target's `s cos(theta_y + m)`.

    Args:
        class_weights: float tensor `[C, D]`. One weight vector per class.
        scale: float > 0. Feature scale `s`. Defaults to `64.0`.
        margin: float in `[0, pi/2)`. Angular margin `m`, radians. Defaults to `0.5`.
        easy_margin: bool. Apply the margin only for `theta_y < pi/2`. Defaults to `False`.

    Examples:
    >>> loss = arcface_loss([0, 3], keras.random.normal((2, 8)), keras.random.normal((10, 8)))

    References:
        Deng et al., "ArcFace: Additive Angular Margin Loss for Deep Face Recognition", CVPR
        2019, Sec. 2.1.
    """
    check_scale_and_margin(scale, margin, max_margin=math.pi / 2)
    loss, count = margin_softmax_loss(
        labels,
        embeddings,
        class_weights,
        scale,
        lambda cosine: arcface_target_logit(cosine, margin, easy_margin),
    )
    return finish(loss, count, return_count, embeddings=embeddings)


def cosface_loss(labels, embeddings, class_weights, scale=64.0, margin=0.35, return_count=False):
    """CosFace: softmax cross-entropy on `s cos(theta)`, the target's `s (cos(theta_y) - m)`.

    Args:
        class_weights: float tensor `[C, D]`. One weight vector per class.
        scale: float > 0. Feature scale `s`. Defaults to `64.0`.
        margin: float >= 0. Cosine margin `m`. Defaults to `0.35`.

    References:
        Wang et al., "CosFace: Large Margin Cosine Loss for Deep Face Recognition", CVPR 2018,
        Sec. 3.1.
    """
    check_scale_and_margin(scale, margin)
    loss, count = margin_softmax_loss(
        labels, embeddings, class_weights, scale, lambda cosine: cosine - margin
    )
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("arcface")
@keras.saving.register_keras_serializable(package="keras_dml")
class ArcFaceLoss(ClassWeightLoss):
    """ArcFace loss as a layer owning the class weights `[num_classes, dim]`.

    Takes `arcface_loss`'s hyper-parameters and `ClassWeightLoss`'s arguments.
    """

    LOSS_ARGUMENTS = ("scale", "margin", "easy_margin")
    loss_fn = staticmethod(arcface_loss)

    def __init__(
        self,
        num_classes=None,
        embedding_dim=None,
        scale=64.0,
        margin=0.5,
        easy_margin=False,
        **kwargs,
    ):
        check_scale_and_margin(scale, margin, max_margin=math.pi / 2)
        self.scale = float(scale)
        self.margin = float(margin)
        self.easy_margin = bool(easy_margin)
        super().__init__(num_classes, embedding_dim, **{"name": "arcface_loss", **kwargs})


@register_loss("cosface")
@keras.saving.register_keras_serializable(package="keras_dml")
class CosFaceLoss(ClassWeightLoss):
    """CosFace (large margin cosine) loss as a layer owning the class weights `[C, dim]`.

    Takes `cosface_loss`'s hyper-parameters and `ClassWeightLoss`'s arguments.
    """

    LOSS_ARGUMENTS = ("scale", "margin")
    loss_fn = staticmethod(cosface_loss)

    def __init__(self, num_classes=None, embedding_dim=None, scale=64.0, margin=0.35, **kwargs):
        check_scale_and_margin(scale, margin)
        self.scale = float(scale)
        self.margin = float(margin)
        super().__init__(num_classes, embedding_dim, **{"name": "cosface_loss", **kwargs})
