"""Random negative mining: one uniformly drawn negative per positive pair."""

import keras
from keras import ops

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.selections import TripletSelection


@register_miner("random")
@keras.saving.register_keras_serializable(package="keras_dml")
class RandomNegativeMiner(TripletMiner):
    """For each positive pair `(a, p)`, a negative of `a` drawn uniformly (with the loss's seed)."""

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        batch_size = ops.shape(matrix)[0]
        scores = keras.random.uniform((batch_size, batch_size, batch_size), seed=seed)
        scores = ops.where(ops.expand_dims(negatives, 1), scores, -1.0)
        index = ops.cast(ops.argmax(scores, axis=-1), "int32")  # [a, p]
        valid = ops.logical_and(positives, ops.any(negatives, axis=1, keepdims=True))
        return TripletSelection(valid, index)
