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

    scores_every_triplet = True  # builds `[B, M, M]`: (anchor, positive, negative)

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        rows, columns = ops.shape(matrix)[0], ops.shape(matrix)[1]
        scores = keras.random.uniform((rows, columns, columns), seed=seed)
        scores = ops.where(ops.expand_dims(negatives, 1), scores, -1.0)
        index = ops.cast(ops.argmax(scores, axis=-1), "int32")  # [a, p]
        valid = ops.logical_and(positives, ops.any(negatives, axis=1, keepdims=True))
        return TripletSelection(valid, index)
