"""The pieces of the DCML objective (Eq. 6-8) as pure `keras.ops` functions."""

from keras import ops

from keras_dml.models.embedding_model import l2_normalize


def compose(sub_embeddings, weights, normalize=True):
    """Composites `z_m = sum_k c_m^k g_k(x)` of M compositors over K sub-embeddings (Eq. 6).

    Args:
        sub_embeddings: float tensor `[N, K, d]`. The K sub-embeddings of each sample (DCML
            uses the L2-normalised ones, see `DCML`).
        weights: float tensor `[N, M, K]`. Signed compositor weights `c_m^k`.
        normalize: bool. L2-normalise each composite. Defaults to `True`.

    Returns:
        float32 tensor `[N, M, d]`.

    Examples:
    >>> z = compose(keras.random.normal((2, 4, 8)), keras.random.normal((2, 3, 4)))  # [2, 3, 8]

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021, Eq. (6).
    """
    sub_embeddings = ops.cast(sub_embeddings, "float32")
    weights = ops.cast(weights, "float32")
    composites = ops.einsum("nmk,nkd->nmd", weights, sub_embeddings)
    return l2_normalize(composites) if normalize else composites


def self_reinforced_loss(weighting_logits):
    """`J_reinf(c_m) = -log max_k |c_m^k|` per compositor, averaged over the batch (Eq. 7).

    The paper writes `max_k c_m^k`; with signed weights that maximum could be negative (the
    log undefined) or pick a small positive weight over a large negative one, so we follow the
    text around Eq. 6-7 ("the absolute weights add up to 1", "increase the largest weight") and
    use the absolute weights. Since `|s_m^k| = 1`, `|c_m^k| = t_m^k` exactly, so the loss is
    `-max_k log_softmax(a_m)_k` on the weighting logits `a_m`: numerically stable, and its
    gradient reaches the weighting branch only. The sign branch gets none (the magnitude of a
    sign is constant, so routing the straight-through gradient into it would only saturate the
    `tanh` without any effect on the loss value).

    Args:
        weighting_logits: float tensor `[N, M, K]`. Pre-softmax weighting logits of Eq. (4).

    Returns:
        float32 tensor `[M]`: one loss per compositor, in `[0, log K]`.

    Examples:
    >>> losses = self_reinforced_loss(keras.random.normal((2, 8, 4)))  # [8]

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021, Eq. (7).
    """
    log_weights = ops.log_softmax(ops.cast(weighting_logits, "float32"), axis=-1)
    return -ops.mean(ops.max(log_weights, axis=-1), axis=0)
