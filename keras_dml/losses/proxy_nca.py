"""Proxy-NCA loss (Movshovitz-Attias et al. 2017) with trainable class proxies."""

import keras
from keras import ops

from keras_dml.losses.class_weights import ClassVectorLoss, prepare_class_weights
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import l2_normalize, one_hot_in_range, prepare_inputs
from keras_dml.pairs.masks import LARGE_VALUE, count_true
from keras_dml.pairs.reduction import finish, masked_mean


def proxy_nca_loss(
    labels, embeddings, proxies, scale=3.0, exclude_positive=True, return_count=False
):
    """Proxy-NCA loss: `-log(exp(-d(x, p_y)) / sum_{z in Z} exp(-d(x, p_z)))` per sample.

    `x` and `p` are L2-normalised and scaled, `d` is the squared distance, `Z` every class but
    `y` (or every class); samples with a label outside `[0, C)` are ignored.

    Args:
        proxies: float tensor `[C, D]`. One proxy per class.
        scale: float. Norm of embeddings and proxies after normalisation. Defaults to `3.0`.
        exclude_positive: bool. Leave the true class out of `Z`. Defaults to `True`.

    References:
        Movshovitz-Attias et al., "No Fuss Distance Metric Learning using Proxies", ICCV 2017,
        Sec. 3-4.
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    proxies = prepare_class_weights(embeddings, proxies, "proxies")
    num_classes = proxies.shape[0]
    x = scale * l2_normalize(embeddings)
    p = scale * l2_normalize(proxies)
    distances = (
        ops.sum(ops.square(x), axis=1, keepdims=True)
        - 2.0 * ops.matmul(x, ops.transpose(p))
        + ops.expand_dims(ops.sum(ops.square(p), axis=1), 0)
    )
    distances = ops.maximum(distances, 0.0)
    targets = one_hot_in_range(labels, num_classes)  # all-zero rows if out of range
    valid = ops.sum(targets, axis=1) > 0.0
    positive_distance = ops.sum(targets * distances, axis=1)
    logits = -distances
    if exclude_positive:
        logits = ops.where(targets > 0.0, -LARGE_VALUE, logits)
        valid = ops.logical_and(valid, num_classes > 1)
    normalizer = ops.logsumexp(logits, axis=1)
    per_sample = ops.where(valid, positive_distance + normalizer, 0.0)
    loss, _ = masked_mean(per_sample, valid)
    return finish(loss, count_true(valid), return_count, embeddings=embeddings)


@register_loss("proxy_nca")
@keras.saving.register_keras_serializable(package="keras_dml")
class ProxyNCALoss(ClassVectorLoss):
    """Proxy-NCA loss as a layer owning the trainable class proxies `[num_classes, dim]`.

    Arguments as `proxy_nca_loss`'s, plus `num_classes`, `embedding_dim`, `proxy_initializer`
    (defaults to `"random_normal"`) and `keras.layers.Layer`'s.
    """

    WEIGHTS_NAME = "proxies"
    LOSS_ARGUMENTS = ("scale", "exclude_positive")
    loss_fn = staticmethod(proxy_nca_loss)

    def __init__(
        self,
        num_classes,
        embedding_dim,
        scale=3.0,
        exclude_positive=True,
        proxy_initializer="random_normal",
        **kwargs,
    ):
        if scale <= 0:
            raise ValueError(f"`scale` must be > 0. Received: scale={scale}")
        self.scale = float(scale)
        self.exclude_positive = bool(exclude_positive)
        self.proxy_initializer = keras.initializers.get(proxy_initializer)
        super().__init__(num_classes, embedding_dim, self.proxy_initializer, **kwargs)
