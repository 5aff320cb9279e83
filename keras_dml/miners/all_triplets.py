"""Every valid triplet of the batch."""

import keras

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.selections import TripletSelection


@register_miner("all_triplets")
@keras.saving.register_keras_serializable(package="keras_dml")
class AllTripletsMiner(TripletMiner):
    """Every triplet `(a, p, n)` of the allowed pairs (`negative_index=None`)."""

    scores_every_triplet = True  # builds `[B, M, M]`: (anchor, positive, negative)

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        return TripletSelection(positives, None)
