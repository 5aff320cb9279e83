"""Circle loss with pair-wise labels (Sun et al. 2020)."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss, check_positive
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.reduction import mean_over_anchors


def circle_loss(labels, embeddings, margin=0.4, gamma=80.0, pair_mask=None, return_count=False):
    """Circle loss on cosine similarities, averaged over the anchors with both kinds of pairs.

    Per anchor: `log(1 + sum_n exp(gamma a_n (s_n - m)) sum_p exp(-gamma a_p (s_p - 1 + m)))`,
    with the constant weights `a_p = [1 + m - s_p]_+` and `a_n = [s_n + m]_+`.

    Args:
        margin: float. The relaxation `m`. Defaults to `0.4`.
        gamma: float > 0. The scale. Defaults to `80.0`.

    References:
        Sun et al., "Circle Loss: A Unified Perspective of Pair Similarity Optimization",
        CVPR 2020, Sec. 3.1 and 3.2.
    """

    def formula(similarities, pos_mask, neg_mask):
        fixed = ops.stop_gradient(similarities)
        alpha_p = ops.relu(1.0 + margin - fixed)
        alpha_n = ops.relu(fixed + margin)
        positive_logits = -gamma * alpha_p * (similarities - (1.0 - margin))
        negative_logits = gamma * alpha_n * (similarities - margin)
        # log(1 + sum_n e^{x_n} sum_p e^{y_p}) = softplus(logsumexp_n x + logsumexp_p y)
        per_anchor = ops.softplus(
            masked_logsumexp(negative_logits, neg_mask, axis=1)
            + masked_logsumexp(positive_logits, pos_mask, axis=1)
        )
        return mean_over_anchors(per_anchor, pos_mask, neg_mask)

    return pair_loss(labels, embeddings, formula, pair_mask=pair_mask, return_count=return_count)


@register_loss("circle")
@keras.saving.register_keras_serializable(package="keras_dml")
class CircleLoss(MetricLoss):
    """Circle loss (pair-wise labels) as a `keras.losses.Loss` over `(labels, embeddings)`."""

    def __init__(
        self,
        margin=0.4,
        gamma=80.0,
        miner=None,
        name="circle_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        super().__init__(
            circle_loss,
            name,
            reduction,
            dtype,
            miner,
            margin=float(margin),
            gamma=check_positive("gamma", gamma, "the scale of the similarities; try 80"),
        )
