"""Multi-similarity loss on the pairs its miner keeps (Wang et al. 2019)."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import multi_similarity_miner
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true


def multi_similarity_loss(
    labels,
    embeddings,
    alpha=2.0,
    beta=50.0,
    base=1.0,
    epsilon=None,
    pair_mask=None,
    return_count=False,
    miner=None,
):
    """Multi-similarity loss on cosine similarities, on the pairs a pair miner keeps.

    Per anchor: `1/alpha log(1 + sum_P exp(-alpha (S - base))) + 1/beta log(1 + sum_N
    exp(beta (S - base)))`, 0 without both mined kinds; averaged over the rows with a pair.

    Args:
        alpha: float. Positive scale. Defaults to `2.0`.
        beta: float. Negative scale. Defaults to `50.0`.
        base: float. Similarity offset `lambda`. Defaults to `1.0`.
        epsilon: float or `None` (`0.1` without `miner`). The miner's margin.
        miner: optional pair miner, registered name or config dict, instead of `epsilon`.

    References:
        Wang et al., "Multi-Similarity Loss with General Pair Weighting for Deep Metric
        Learning", CVPR 2019, Sec. 4.
    """
    miner = multi_similarity_miner(epsilon, miner)

    def formula(similarities, pos_mask, neg_mask):
        mined_pos, mined_neg = miner.mine(similarities, pos_mask, neg_mask)
        anchor_valid = ops.logical_and(ops.any(mined_pos, axis=1), ops.any(mined_neg, axis=1))
        positive_logits = -alpha * (similarities - base)
        positive_term = masked_logsumexp(positive_logits, mined_pos, add_one=True) / alpha
        negative_logits = beta * (similarities - base)
        negative_term = masked_logsumexp(negative_logits, mined_neg, add_one=True) / beta
        per_anchor = ops.where(anchor_valid, positive_term + negative_term, 0.0)
        num_anchors = count_true(ops.any(ops.logical_or(pos_mask, neg_mask), axis=1))
        loss = ops.sum(per_anchor) / ops.maximum(num_anchors, 1.0)
        valid_column = ops.expand_dims(anchor_valid, 1)
        return loss, count_true(ops.logical_and(ops.logical_or(mined_pos, mined_neg), valid_column))

    return pair_loss(labels, embeddings, formula, pair_mask=pair_mask, return_count=return_count)


@register_loss("multi_similarity")
@keras.saving.register_keras_serializable(package="keras_dml")
class MultiSimilarityLoss(MetricLoss):
    """Multi-similarity loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Takes `multi_similarity_loss`'s hyper-parameters and `Loss` arguments.
    """

    def __init__(
        self,
        alpha=2.0,
        beta=50.0,
        base=1.0,
        epsilon=None,
        miner=None,
        name="multi_similarity_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        if alpha <= 0 or beta <= 0:
            raise ValueError(
                f"`alpha` and `beta` must be > 0. Received: alpha={alpha}, beta={beta}"
            )
        miner = multi_similarity_miner(epsilon, miner)
        super().__init__(
            multi_similarity_loss,
            name,
            reduction,
            dtype,
            miner,
            alpha=float(alpha),
            beta=float(beta),
            base=float(base),
        )
