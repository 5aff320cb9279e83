"""Negative selection for the margin loss: distance-weighted sampling and closest-above-cutoff.

Both selectors return, for every slot `(i, j)` of the `[B, B]` pair grid, the index of the
negative paired with anchor `i` for its positive `j`, so each anchor gets as many negatives as it
has positives (Wu et al. Sec. 4; D&C reference code).
"""

import keras
from keras import ops

from keras_dml.losses.mining import LARGE_VALUE, count_true

_TINY = 1e-30


def distance_weighted_probabilities(
    distances, neg_mask, embedding_dim, cutoff=0.5, nonzero_loss_cutoff=1.4
):
    """Per-anchor sampling probabilities of negatives, proportional to `q(d)^-1`.

    On the unit sphere in `n` dimensions pairwise distances follow
    `q(d) ∝ d^(n-2) [1 - d^2/4]^((n-3)/2)` (Wu et al., Sec. 4); sampling negatives with weight
    `q(d)^-1` spreads them uniformly over distances. Distances are clipped below at `cutoff`
    (weights of very close pairs would explode) and negatives at or beyond `nonzero_loss_cutoff`
    (which give zero margin loss) are not drawn. An anchor whose negatives all lie beyond the
    cutoff draws uniformly among its negatives; an anchor without negatives gets an all-zero row.

    Args:
        distances: float tensor `[B, B]`. Euclidean distances of L2-normalised embeddings.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        embedding_dim: int. Dimension `n` of the embedding.
        cutoff: float. Lower clip of distances. Defaults to `0.5`.
        nonzero_loss_cutoff: float. Negatives at or beyond this distance are skipped.
            Defaults to `1.4` (= beta + margin of the margin loss).

    Returns:
        float32 tensor `[B, B]`; rows sum to 1 for anchors with a negative, else 0.

    References:
        Wu, Manmatha, Smola, Krähenbühl, "Sampling Matters in Deep Embedding Learning",
        ICCV 2017, Sec. 4; Zheng et al., "Deep Compositional Metric Learning", CVPR 2021,
        Eq. (9).
    """
    n = float(embedding_dim)
    distances = ops.stop_gradient(ops.cast(distances, "float32"))
    clipped = ops.maximum(distances, cutoff)
    log_weights = (2.0 - n) * ops.log(clipped) - ((n - 3.0) / 2.0) * ops.log(
        ops.maximum(1.0 - 0.25 * ops.square(clipped), 1e-8)
    )
    eligible = ops.logical_and(neg_mask, ops.less(distances, nonzero_loss_cutoff))
    log_weights = ops.where(eligible, log_weights, -LARGE_VALUE)
    row_max = ops.max(log_weights, axis=1, keepdims=True)
    weights = ops.exp(log_weights - row_max) * ops.cast(eligible, "float32")
    weight_sum = ops.sum(weights, axis=1, keepdims=True)
    negatives = ops.cast(neg_mask, "float32")
    uniform = negatives / ops.maximum(ops.sum(negatives, axis=1, keepdims=True), 1.0)
    return ops.where(weight_sum > 0.0, weights / ops.maximum(weight_sum, _TINY), uniform)


def sample_negatives(probabilities, seed=None):
    """Draws one negative per pair slot `(i, j)` from row `i` of `probabilities`.

    Args:
        probabilities: float tensor `[B, B]`, e.g. from `distance_weighted_probabilities`.
        seed: int or `keras.random.SeedGenerator`. Inside `tf.function` pass a `SeedGenerator`.
            Defaults to `None`.

    Returns:
        Tuple `(indices, valid)`: int32 `[B, B]` negative indices (drawn with replacement) and
        bool `[B, B]`, False for anchors that have no negative.
    """
    probabilities = ops.cast(probabilities, "float32")
    logits = ops.where(probabilities > 0.0, ops.log(ops.maximum(probabilities, _TINY)), -1e4)
    batch_size = ops.shape(probabilities)[0]
    indices = keras.random.categorical(logits, batch_size, dtype="int32", seed=seed)
    has_negative = ops.sum(probabilities, axis=1, keepdims=True) > 0.0
    return indices, ops.logical_and(has_negative, ops.ones_like(indices, dtype="bool"))


def closest_negatives(distances, pos_mask, neg_mask, cutoff=0.5):
    """For the `r`-th positive of each anchor, its `r`-th closest negative at distance >= cutoff.

    This is the negative selection of the Divide & Conquer reference code: each anchor gets as
    many negatives as it has positives, the closest ones not nearer than `cutoff`.

    Args:
        distances: float tensor `[B, B]`. Euclidean distances.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        cutoff: float. Minimum distance of a selected negative. Defaults to `0.5`.

    Returns:
        Tuple `(indices, valid)`: int32 `[B, B]` negative indices and bool `[B, B]`, False where
        the anchor has fewer eligible negatives than the positive's rank.

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning",
        CVPR 2019, Sec. 4 (margin loss setup).
    """
    distances = ops.stop_gradient(ops.cast(distances, "float32"))
    eligible = ops.logical_and(neg_mask, ops.greater_equal(distances, cutoff))
    order = ops.argsort(ops.where(eligible, distances, LARGE_VALUE), axis=1)
    rank = ops.cast(ops.cumsum(ops.cast(pos_mask, "int32"), axis=1) - 1, "int32")
    batch_size = ops.shape(distances)[0]
    indices = ops.take_along_axis(
        ops.cast(order, "int32"), ops.clip(rank, 0, batch_size - 1), axis=1
    )
    num_eligible = ops.cast(count_true(eligible, axis=1), "int32")
    valid = ops.less(rank, ops.expand_dims(num_eligible, 1))
    return indices, valid
