"""Semi-hard triplet mining (FaceNet)."""

import keras
from keras import ops

from keras_dml.miners.base import TripletMiner
from keras_dml.miners.registry import register_miner
from keras_dml.pairs.masks import LARGE_VALUE
from keras_dml.pairs.selections import TripletSelection


@register_miner("semi_hard")
@keras.saving.register_keras_serializable(package="keras_dml")
class SemiHardMiner(TripletMiner):
    """For each positive pair `(a, p)`, the closest negative with `d(a, n) > d(a, p)`, else the
    farthest negative.

    References:
        Schroff et al., "FaceNet", CVPR 2015, Sec. 3.2 (semi-hard negatives).
    """

    scores_every_triplet = True  # builds `[B, M, M]`: (anchor, positive, negative)

    def mine(self, matrix, positives, negatives, embedding_dim=None, seed=None):
        d_ap = ops.expand_dims(matrix, 2)  # [a, p, 1]
        d_an = ops.expand_dims(matrix, 1)  # [a, 1, n]
        candidates = ops.expand_dims(negatives, 1)  # [a, 1, n]
        outside = ops.logical_and(candidates, ops.greater(d_an, d_ap))
        semi_hard = ops.argmin(ops.where(outside, d_an, LARGE_VALUE), axis=-1)
        easiest_inside = ops.argmax(ops.where(candidates, d_an, -LARGE_VALUE), axis=-1)
        index = ops.where(ops.any(outside, axis=-1), semi_hard, easiest_inside)
        valid = ops.logical_and(positives, ops.any(negatives, axis=1, keepdims=True))
        return TripletSelection(valid, ops.cast(index, "int32"))
