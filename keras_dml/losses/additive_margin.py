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


def margin_softmax_loss(labels, embeddings, class_weights, scale, target_logit_fn):
    """Cross-entropy on `scale * cos(theta)` logits whose target entry is `target_logit_fn(cos)`.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`.
        embeddings: float tensor `[B, D]`.
        class_weights: float tensor `[C, D]`.
        scale: float. Multiplies every logit (the feature norm `s` of the papers).
        target_logit_fn: callable mapping the `[B]` target cosines to the margin-penalised
            target logits (before scaling).

    Returns:
        Tuple `(loss, num_samples)`: float32 scalar (NaN for out-of-range labels in a graph or
        NaN / Inf embeddings) and int32 scalar.
    """
    labels, embeddings, class_weights, invalid = prepare_class_inputs(
        labels, embeddings, class_weights
    )
    cosine = cosine_logits(embeddings, class_weights)
    targets = one_hot_in_range(labels, class_weights.shape[0])
    target_cosine = ops.sum(targets * cosine, axis=1)
    target_logit = target_logit_fn(target_cosine)
    logits = scale * (cosine + targets * ops.expand_dims(target_logit - target_cosine, 1))
    per_sample = ops.logsumexp(logits, axis=1) - scale * target_logit
    return mean_over_samples(per_sample, invalid)


def check_scale_and_margin(scale, margin, max_margin=None):
    """Raises a `ValueError` for a non-positive scale or a margin outside `[0, max_margin)`."""
    if scale <= 0:
        raise ValueError(f"`scale` must be > 0. Received: scale={scale}")
    if margin < 0 or (max_margin is not None and margin >= max_margin):
        bound = "" if max_margin is None else f" and < {max_margin:.4f} (pi/2 radians)"
        raise ValueError(f"`margin` must be >= 0{bound}. Received: margin={margin}")


def arcface_target_logit(cosine, margin=0.5, easy_margin=False):
    """`cos(theta + m)` for target cosines `cos(theta)`, with the usual monotonic fallback.

    `cos(theta + m)` stops decreasing in `theta` once `theta + m > pi`. Like the official
    InsightFace code (and pytorch-metric-learning), targets with `theta > pi - m` get
    `cos(theta) - m sin(m)` instead, which continues the logit downwards. With `easy_margin=True`
    the margin is applied only where `cos(theta) > 0` (the logit is `cos(theta)` elsewhere).
    `sin(theta)` is taken as `sqrt((1 - cos)(1 + cos))` with a finite gradient at `cos = +-1`.

    Args:
        cosine: float tensor. Target cosines.
        margin: float. Angular margin `m` in radians. Defaults to `0.5`.
        easy_margin: bool. Apply the margin only for `theta < pi / 2`. Defaults to `False`.

    Returns:
        float32 tensor of the same shape.
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
    """ArcFace: softmax cross-entropy with an additive angular margin on the target class.

    `l(x, y) = -log( e^{s cos(theta_y + m)} / (e^{s cos(theta_y + m)}
    + sum_{c != y} e^{s cos(theta_c)}) )`, `theta_c` the angle between `x` and class weight
    `w_c` (both L2-normalised), averaged over the batch. See `arcface_target_logit` for the
    threshold used when `theta_y + m > pi` and for `easy_margin`.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`; others raise a `ValueError` in an eager
            call and give a NaN loss inside a traced graph.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        class_weights: float tensor `[C, D]`. One weight vector per class (normalised inside).
        scale: float. Feature scale `s`. Defaults to `64.0` (the paper's choice).
        margin: float. Angular margin `m` in radians, in `[0, pi/2)`. Defaults to `0.5` (the
            paper's choice).
        easy_margin: bool. Apply the margin only for `theta_y < pi/2`. Defaults to `False`.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_samples)`; 0.0 for an empty batch, NaN when an embedding
        holds NaN or Inf.

    Examples:
    >>> weights = keras.random.normal((10, 8))
    >>> loss = arcface_loss([0, 3, 3, 7], keras.random.normal((4, 8)), weights)

    References:
        Deng et al., "ArcFace: Additive Angular Margin Loss for Deep Face Recognition", CVPR
        2019, Sec. 2.1 (the ArcFace loss; s = 64, m = 0.5).
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
    """CosFace (large margin cosine loss): softmax cross-entropy with `cos(theta_y) - m`.

    `l(x, y) = -log( e^{s (cos(theta_y) - m)} / (e^{s (cos(theta_y) - m)}
    + sum_{c != y} e^{s cos(theta_c)}) )`, with `x` and the class weights L2-normalised,
    averaged over the batch.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`; others raise a `ValueError` in an eager
            call and give a NaN loss inside a traced graph.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        class_weights: float tensor `[C, D]`. One weight vector per class (normalised inside).
        scale: float. Feature scale `s`. Defaults to `64.0`.
        margin: float. Cosine margin `m >= 0`. Defaults to `0.35`.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_samples)`; 0.0 for an empty batch, NaN when an embedding
        holds NaN or Inf.

    Examples:
    >>> weights = keras.random.normal((10, 8))
    >>> loss = cosface_loss([0, 3, 3, 7], keras.random.normal((4, 8)), weights)

    References:
        Wang et al., "CosFace: Large Margin Cosine Loss for Deep Face Recognition", CVPR 2018,
        Sec. 3.1 (the large margin cosine loss, LMCL; s = 64, m = 0.35).
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

    Pass it to `EmbeddingModel.compile(loss=...)`: the model then owns the layer (its class
    weights train with the model, are saved in `.keras` files and are left out of exports).

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        scale: float. Feature scale `s`. Defaults to `64.0`.
        margin: float. Angular margin in radians, in `[0, pi/2)`. Defaults to `0.5`.
        easy_margin: bool. Apply the margin only for angles below 90 degrees.
            Defaults to `False` (the fallback `cos(theta) - m sin(m)` beyond `pi - m`).
        weights_initializer: initializer of the class weights. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_samples)`.

    Examples:
    >>> loss_layer = ArcFaceLoss(num_classes=100, embedding_dim=128)
    >>> model.compile(optimizer="adam", loss=loss_layer)  # model: an EmbeddingModel

    References:
        Deng et al., "ArcFace: Additive Angular Margin Loss for Deep Face Recognition", CVPR
        2019, Sec. 2.1.
    """

    WEIGHTS_NAME = "class_weights"
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
        kwargs.setdefault("name", "arcface_loss")
        super().__init__(num_classes, embedding_dim, **kwargs)
        self.scale = float(scale)
        self.margin = float(margin)
        self.easy_margin = bool(easy_margin)


@register_loss("cosface")
@keras.saving.register_keras_serializable(package="keras_dml")
class CosFaceLoss(ClassWeightLoss):
    """CosFace (large margin cosine) loss as a layer owning the class weights `[C, dim]`.

    Pass it to `EmbeddingModel.compile(loss=...)`: the model then owns the layer (its class
    weights train with the model, are saved in `.keras` files and are left out of exports).

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        scale: float. Feature scale `s`. Defaults to `64.0`.
        margin: float. Cosine margin `m >= 0`. Defaults to `0.35`.
        weights_initializer: initializer of the class weights. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_samples)`.

    Examples:
    >>> loss_layer = CosFaceLoss(num_classes=100, embedding_dim=128)
    >>> model.compile(optimizer="adam", loss=loss_layer)  # model: an EmbeddingModel

    References:
        Wang et al., "CosFace: Large Margin Cosine Loss for Deep Face Recognition", CVPR 2018,
        Sec. 3.1.
    """

    WEIGHTS_NAME = "class_weights"
    LOSS_ARGUMENTS = ("scale", "margin")
    loss_fn = staticmethod(cosface_loss)

    def __init__(self, num_classes=None, embedding_dim=None, scale=64.0, margin=0.35, **kwargs):
        check_scale_and_margin(scale, margin)
        kwargs.setdefault("name", "cosface_loss")
        super().__init__(num_classes, embedding_dim, **kwargs)
        self.scale = float(scale)
        self.margin = float(margin)
