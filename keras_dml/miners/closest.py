"""Closest-negative selection of the Divide & Conquer reference code, as a miner."""

import keras
from keras import ops

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.masks import LARGE_VALUE, count_true
from keras_dml.pairs.selections import TripletSelection


def closest_negatives(distances, pos_mask, neg_mask, cutoff=0.5):
    """`(indices, valid)` `[B, B]`: for each anchor's `r`-th positive, its `r`-th closest
    negative at distance >= `cutoff` (invalid where there are fewer).

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning",
        CVPR 2019, Sec. 4 (margin loss setup).
    """
    distances = ops.stop_gradient(ops.cast(distances, "float32"))
    eligible = ops.logical_and(neg_mask, ops.greater_equal(distances, cutoff))
    order = ops.argsort(ops.where(eligible, distances, LARGE_VALUE), axis=1)
    rank = ops.cast(ops.cumsum(ops.cast(pos_mask, "int32"), axis=1) - 1, "int32")
    num_columns = ops.shape(distances)[1]
    indices = ops.take_along_axis(
        ops.cast(order, "int32"), ops.clip(rank, 0, num_columns - 1), axis=1
    )
    num_eligible = ops.cast(count_true(eligible, axis=1), "int32")
    valid = ops.less(rank, ops.expand_dims(num_eligible, 1))
    return indices, valid


@register_miner("closest")
@keras.saving.register_keras_serializable(package="keras_dml")
class ClosestNegativeMiner(TripletMiner):
    """For the `r`-th positive of each anchor, its `r`-th closest negative at distance >= cutoff.

    Args:
        cutoff: float. Minimum distance of a chosen negative. Defaults to `0.5`.
    """

    def __init__(self, cutoff=0.5):
        if cutoff < 0:
            raise ValueError(f"`cutoff` must be >= 0. Received: cutoff={cutoff}")
        self.cutoff = float(cutoff)

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        index, eligible = closest_negatives(matrix, positives, negatives, self.cutoff)
        return TripletSelection(ops.logical_and(positives, eligible), index)
