"""Distance-weighted negative sampling (Wu et al. 2017), as a miner and its two functions."""

import keras
from keras import ops

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.masks import LARGE_VALUE
from keras_dml.pairs.selections import TripletSelection

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


@register_miner("distance_weighted")
@keras.saving.register_keras_serializable(package="keras_dml")
class DistanceWeightedMiner(TripletMiner):
    """For each positive pair `(a, p)`, a negative of `a` drawn with probability `q(d)^-1`.

    Each anchor gets as many negatives as it has positives, drawn with replacement among its
    negatives closer than `nonzero_loss_cutoff` (`distance_weighted_probabilities`). The
    distances must be Euclidean distances of L2-normalised embeddings (the unit sphere).

    Args:
        cutoff: float. Lower clip of the distances. Defaults to `0.5`.
        nonzero_loss_cutoff: float. Negatives at or beyond this distance are not drawn.
            Defaults to `1.4`.

    Examples:
    >>> embeddings = keras_dml.pairs.l2_normalize(keras.random.normal((4, 8)))
    >>> seed = keras.random.SeedGenerator(0)
    >>> selection = DistanceWeightedMiner()(embeddings, [0, 0, 1, 1], seed=seed)

    References:
        Wu, Manmatha, Smola, Krähenbühl, "Sampling Matters in Deep Embedding Learning",
        ICCV 2017, Sec. 4.
    """

    def __init__(self, cutoff=0.5, nonzero_loss_cutoff=1.4):
        if cutoff < 0 or nonzero_loss_cutoff <= cutoff:
            raise ValueError(
                "Expected 0 <= cutoff < nonzero_loss_cutoff. "
                f"Received: cutoff={cutoff}, nonzero_loss_cutoff={nonzero_loss_cutoff}"
            )
        self.cutoff = float(cutoff)
        self.nonzero_loss_cutoff = float(nonzero_loss_cutoff)

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        if embedding_dim is None:
            raise ValueError(
                "Distance-weighted sampling needs a static embedding dimension: give the "
                "embeddings a known width. Received: embedding_dim=None"
            )
        probabilities = distance_weighted_probabilities(
            matrix, negatives, embedding_dim, self.cutoff, self.nonzero_loss_cutoff
        )
        index, has_negative = sample_negatives(probabilities, seed=seed)
        return TripletSelection(ops.logical_and(positives, has_negative), index)
