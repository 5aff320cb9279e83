"""Every valid pair of the batch."""

import keras

from keras_dml.miners.base import PairMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.selections import PairSelection


@register_miner("all_pairs")
@keras.saving.register_keras_serializable(package="keras_dml")
class AllPairsMiner(PairMiner):
    """Every allowed positive and negative pair (no mining)."""

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        return PairSelection(positives, negatives)
