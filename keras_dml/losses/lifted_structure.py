"""Lifted structured loss, the smooth form of Oh Song et al. (2016), Eq. 4."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import LARGE_VALUE
from keras_dml.pairs.reduction import mean_over_positive_pairs
from keras_dml.pairs.references import ReferenceBlock


def lifted_structure_loss(
    labels,
    embeddings,
    margin=1.0,
    normalize_embeddings=False,
    pair_mask=None,
    return_count=False,
):
    """Lifted structured loss, the mean of `max(0, J_ij)^2 / 2` over the positive pairs.

    `J_ij = log(sum_{N(i)} exp(alpha - D_ik) + sum_{N(j)} exp(alpha - D_jl)) + D_ij`.

    Args:
        margin: float. The margin `alpha`. Defaults to `1.0`.
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.

    References:
        Oh Song, Xiang, Jegelka, Savarese, "Deep Metric Learning via Lifted Structured Feature
        Embedding", CVPR 2016, Eq. (4).
    """

    def formula(distances, pos_mask, neg_mask):
        has_negative = ops.any(neg_mask, axis=1)
        negatives = masked_logsumexp(margin - distances, neg_mask, axis=1)
        negatives = ops.where(has_negative, negatives, -LARGE_VALUE)
        # log(sum over N(i) + sum over N(j)) = logaddexp of the two rows' log-sum-exps; a
        # reference (a memory slot) is no anchor: N(j) is empty.
        reference = isinstance(pair_mask, ReferenceBlock)
        others = -LARGE_VALUE if reference else ops.expand_dims(negatives, 0)
        both = ops.logaddexp(ops.expand_dims(negatives, 1), others)
        pair_losses = ops.where(pos_mask, ops.square(ops.relu(both + distances)) / 2.0, 0.0)
        return mean_over_positive_pairs(pair_losses, pos_mask, neg_mask)

    return pair_loss(
        labels, embeddings, formula, "euclidean", normalize_embeddings, pair_mask, return_count
    )


@register_loss("lifted_structure")
@keras.saving.register_keras_serializable(package="keras_dml")
class LiftedStructureLoss(MetricLoss):
    """Lifted structured pair loss (Eq. 4) as a `keras.losses.Loss` over `(labels, embeddings)`.

    Takes `lifted_structure_loss`'s hyper-parameters, a pair `miner` and `Loss` arguments.
    """

    def __init__(
        self,
        margin=1.0,
        normalize_embeddings=False,
        miner=None,
        name="lifted_structure_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        normalize = bool(normalize_embeddings)
        super().__init__(
            lifted_structure_loss,
            name,
            reduction,
            dtype,
            miner,
            margin=float(margin),
            normalize_embeddings=normalize,
        )
