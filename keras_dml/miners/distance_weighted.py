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
    """Per-anchor probabilities `[B, B]` of drawing each negative, proportional to `q(d)^-1`.

    `q(d) ∝ d^(n-2) [1 - d^2/4]^((n-3)/2)` is the distance density on the unit sphere; distances
    are clipped below at `cutoff`, negatives at or beyond `nonzero_loss_cutoff` are not drawn (an
    anchor with none left draws uniformly, one without negatives gets a zero row).

    References:
        Wu, Manmatha, Smola, Krähenbühl, "Sampling Matters in Deep Embedding Learning",
        ICCV 2017, Sec. 4.
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
    """`(indices, valid)` `[B, B]`: one negative per slot `(i, j)` drawn from row `i`."""
    probabilities = ops.cast(probabilities, "float32")
    logits = ops.where(probabilities > 0.0, ops.log(ops.maximum(probabilities, _TINY)), -1e4)
    num_columns = ops.shape(probabilities)[1]
    indices = keras.random.categorical(logits, num_columns, dtype="int32", seed=seed)
    has_negative = ops.sum(probabilities, axis=1, keepdims=True) > 0.0
    return indices, ops.logical_and(has_negative, ops.ones_like(indices, dtype="bool"))


@register_miner("distance_weighted")
@keras.saving.register_keras_serializable(package="keras_dml")
class DistanceWeightedMiner(TripletMiner):
    """For each positive pair `(a, p)`, a negative of `a` drawn with probability `q(d)^-1`.

    Args:
        cutoff: float. Lower clip of the distances. Defaults to `0.5`.
        nonzero_loss_cutoff: float. Negatives at or beyond it are not drawn. Defaults to `1.4`.

    References:
        Wu et al., "Sampling Matters in Deep Embedding Learning", ICCV 2017, Sec. 4.
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
