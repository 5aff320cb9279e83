"""Proxy-Anchor loss (Kim et al. 2020): each class proxy is an anchor for the whole batch."""

import keras
from keras import ops

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    cosine_logits,
    poison_if,
    prepare_class_inputs,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import one_hot_in_range
from keras_dml.pairs.masks import LARGE_VALUE
from keras_dml.pairs.reduction import finish


def log_one_plus_sum_exp(values, mask, axis):
    """`log(1 + sum_{mask} exp(values))` along `axis`, stable for large values.

    Entries outside `mask` are ignored; an all-False slice gives `log(1) = 0`. NaN inside the
    mask gives NaN.

    Args:
        values: float tensor.
        mask: bool tensor of the same shape.
        axis: int. Axis to reduce.

    Returns:
        float32 tensor with `axis` removed.
    """
    masked = ops.where(mask, values, -LARGE_VALUE)
    # `initial=0`: the shift is max(values, 0), also for an empty batch.
    shift = ops.stop_gradient(ops.max(masked, axis=axis, keepdims=True, initial=0.0))
    total = ops.exp(-shift) + ops.sum(
        ops.where(mask, ops.exp(masked - shift), 0.0), axis=axis, keepdims=True
    )
    return ops.squeeze(shift + ops.log(total), axis=axis)


def proxy_anchor_loss(labels, embeddings, proxies, alpha=32.0, delta=0.1, return_count=False):
    """Proxy-Anchor loss of a batch against one proxy per class (Eq. 4 of the paper).

    With `s(x, p)` the cosine similarity, `P` all proxies, `P+` the proxies of the classes present
    in the batch, `X_p+` the batch samples of class `p` and `X_p-` the others:
    `l = 1/|P+| sum_{p in P+} log(1 + sum_{x in X_p+} exp(-alpha (s(x, p) - delta)))
    + 1/|P| sum_{p in P} log(1 + sum_{x in X_p-} exp(alpha (s(x, p) + delta)))`.
    Proxies of classes absent from the batch only receive the negative term.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`; others raise a `ValueError` in an eager
            call and give a NaN loss inside a traced graph.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        proxies: float tensor `[C, D]`. One proxy per class (normalised inside).
        alpha: float. Scale `alpha`. Defaults to `32.0` (the paper's choice).
        delta: float. Margin `delta`. Defaults to `0.1` (the paper's choice).
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_samples)`; 0.0 for an empty batch, NaN when an embedding
        holds NaN or Inf.

    Examples:
    >>> proxies = keras.random.normal((10, 8))
    >>> loss = proxy_anchor_loss([0, 3, 3, 7], keras.random.normal((4, 8)), proxies)

    References:
        Kim et al., "Proxy Anchor Loss for Deep Metric Learning", CVPR 2020, Eq. 4.
    """
    if alpha <= 0:
        raise ValueError(f"`alpha` must be > 0. Received: alpha={alpha}")
    labels, embeddings, proxies, invalid = prepare_class_inputs(
        labels, embeddings, proxies, weights_name="proxies"
    )
    num_classes = proxies.shape[0]
    similarities = cosine_logits(embeddings, proxies)  # [B, C]
    positive = one_hot_in_range(labels, num_classes) > 0.0
    negative = ops.logical_not(positive)
    positive_terms = log_one_plus_sum_exp(-alpha * (similarities - delta), positive, axis=0)
    negative_terms = log_one_plus_sum_exp(alpha * (similarities + delta), negative, axis=0)
    num_with_positives = ops.sum(ops.cast(ops.any(positive, axis=0), "float32"))
    loss = ops.sum(positive_terms) / ops.maximum(num_with_positives, 1.0) + ops.sum(
        negative_terms
    ) / float(num_classes)
    count = ops.shape(labels)[0]
    return finish(poison_if(loss, invalid), count, return_count, embeddings=embeddings)


@register_loss("proxy_anchor")
@keras.saving.register_keras_serializable(package="keras_dml")
class ProxyAnchorLoss(ClassWeightLoss):
    """Proxy-Anchor loss as a layer owning the trainable proxies `[num_classes, dim]`.

    Pass it to `EmbeddingModel.compile(loss=...)`: the model then owns the layer (its proxies
    train with the model, are saved in `.keras` files and are left out of exports). The paper
    trains the proxies with a learning rate 100x the network's:
    `keras_dml.optimizers.LearningRateMultipliers(keras.optimizers.AdamW(1e-4),
    {"proxies$": 100.0})` does that (the proxies' variable path ends in `proxies`), and
    `keras_dml.training.train` / `keras-dml train` apply it unless the run configuration's
    optimizer entry sets `lr_multipliers` (`recommended_lr_multipliers` below).

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        alpha: float. Scale. Defaults to `32.0`.
        delta: float. Margin. Defaults to `0.1`.
        weights_initializer: initializer of the proxies. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_samples)`.

    Examples:
    >>> loss_layer = ProxyAnchorLoss(num_classes=100, embedding_dim=128)
    >>> model.compile(optimizer="adam", loss=loss_layer)  # model: an EmbeddingModel

    References:
        Kim et al., "Proxy Anchor Loss for Deep Metric Learning", CVPR 2020, Eq. 4.
    """

    WEIGHTS_NAME = "proxies"
    LOSS_ARGUMENTS = ("alpha", "delta")
    loss_fn = staticmethod(proxy_anchor_loss)

    # Kim et al. (2020), Sec. 5.1 (implementation details): proxies at 100x the learning rate.
    recommended_lr_multipliers = {"proxies$": 100.0}

    def __init__(self, num_classes=None, embedding_dim=None, alpha=32.0, delta=0.1, **kwargs):
        if alpha <= 0:
            raise ValueError(f"`alpha` must be > 0. Received: alpha={alpha}")
        super().__init__(num_classes, embedding_dim, **kwargs)
        self.alpha = float(alpha)
        self.delta = float(delta)
