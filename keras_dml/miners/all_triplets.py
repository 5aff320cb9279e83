"""Every valid triplet of the batch."""

import keras

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.selections import TripletSelection


@register_miner("all_triplets")
@keras.saving.register_keras_serializable(package="keras_dml")
class AllTripletsMiner(TripletMiner):
    """Every triplet `(a, p, n)` of the allowed positive and negative pairs (no mining).

    Returns the positive pairs as slots with `negative_index=None`: each slot takes every
    negative of its anchor, `[B, B, B]` triplets in all.

    Examples:
    >>> selection = AllTripletsMiner()(keras.random.normal((4, 8)), [0, 0, 1, 1])
    >>> selection.negative_index is None
    True
    """

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        return TripletSelection(positives, None)
