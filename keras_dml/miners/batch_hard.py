"""Batch-hard triplet mining (Hermans et al.)."""

import keras
from keras import ops

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.masks import LARGE_VALUE
from keras_dml.pairs.selections import TripletSelection


@register_miner("batch_hard")
@keras.saving.register_keras_serializable(package="keras_dml")
class BatchHardMiner(TripletMiner):
    """For each anchor, one triplet: its farthest positive and its closest negative.

    References:
        Hermans, Beyer, Leibe, "In Defense of the Triplet Loss for Person Re-Identification",
        arXiv:1703.07737, Eq. (5).
    """

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        hardest_positive = ops.argmax(ops.where(positives, matrix, -LARGE_VALUE), axis=1)
        hardest_negative = ops.argmin(ops.where(negatives, matrix, LARGE_VALUE), axis=1)
        has_both = ops.logical_and(ops.any(positives, axis=1), ops.any(negatives, axis=1))
        columns = ops.arange(ops.shape(matrix)[1], dtype="int32")
        chosen = ops.equal(columns[None, :], ops.cast(hardest_positive, "int32")[:, None])
        valid = ops.logical_and(chosen, ops.expand_dims(has_both, 1))
        index = ops.cast(hardest_negative, "int32")[:, None] + ops.zeros_like(columns)[None, :]
        return TripletSelection(valid, index)
