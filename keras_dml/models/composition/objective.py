"""The pieces of DCML's objective (Zheng et al., CVPR 2021, Eq. 6-8) as `keras.ops` functions."""

from keras import ops

from keras_dml.models.embedding_model import l2_normalize


def compose(sub_embeddings, weights, normalize=True):
    """Composites `z_m = sum_k c_m^k g_k(x)` of M compositors over K sub-embeddings (Eq. 6).

    Args:
        sub_embeddings: float tensor `[N, K, d]`.
        weights: float tensor `[N, M, K]`. Signed compositor weights `c_m^k`.
        normalize: bool. L2-normalise each composite. Defaults to `True`.

    Returns:
        float32 tensor `[N, M, d]`.
    """
    sub_embeddings = ops.cast(sub_embeddings, "float32")
    weights = ops.cast(weights, "float32")
    composites = ops.einsum("nmk,nkd->nmd", weights, sub_embeddings)
    return l2_normalize(composites) if normalize else composites


def self_reinforced_loss(weighting_logits):
    """`J_reinf(c_m) = -log max_k |c_m^k|` per compositor, averaged over the batch (Eq. 7).

    Args:
        weighting_logits: float tensor `[N, M, K]`. Pre-softmax weighting logits of Eq. 4.

    Returns:
        float32 tensor `[M]`: one loss per compositor, in `[0, log K]`.
    """
    log_weights = ops.log_softmax(ops.cast(weighting_logits, "float32"), axis=-1)
    return -ops.mean(ops.max(log_weights, axis=-1), axis=0)
