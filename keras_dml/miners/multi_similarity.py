"""Multi-similarity pair mining (Wang et al. 2019)."""

import keras
from keras import ops

from keras_dml.miners.base import PairMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.masks import masked_max, masked_min
from keras_dml.pairs.selections import PairSelection


@register_miner("multi_similarity")
@keras.saving.register_keras_serializable(package="keras_dml")
class MultiSimilarityMiner(PairMiner):
    """Keeps a negative pair harder than the anchor's easiest positive (and vice versa).

    Args:
        epsilon: float. Mining margin. Defaults to `0.1`.

    References:
        Wang et al., "Multi-Similarity Loss with General Pair Weighting for Deep Metric
        Learning", CVPR 2019, Sec. 4, Eqs. 4 and 5 (pair mining).
    """

    metric = "cosine"

    def __init__(self, epsilon=0.1):
        self.epsilon = float(epsilon)

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        similarities = ops.stop_gradient(matrix)
        hardest_positive = ops.expand_dims(masked_min(similarities, positives, axis=1), 1)
        hardest_negative = ops.expand_dims(masked_max(similarities, negatives, axis=1), 1)
        mined_neg = ops.logical_and(
            negatives, ops.greater(similarities + self.epsilon, hardest_positive)
        )
        mined_pos = ops.logical_and(
            positives, ops.less(similarities - self.epsilon, hardest_negative)
        )
        return PairSelection(mined_pos, mined_neg)
