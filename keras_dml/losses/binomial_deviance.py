"""Binomial deviance loss on cosine similarities (BIER form)."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.reduction import (
    PAIR_BALANCES,
    WEIGHT_NORMALIZATIONS,
    check_choice,
    reduce_pair_losses,
)


def binomial_deviance_pairs(similarities, pos_mask, neg_mask, alpha=2.0, beta=0.5, cost=25.0):
    """Per-pair binomial deviance `[B, B]`: `log(1 + exp(-(2y - 1) alpha (s - beta) C_y))`.

    `C_y` is 1 for positive pairs and `cost` for negative pairs.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Table 1 and Eq. (2);
        Yi et al., "Deep Metric Learning for Person Re-Identification", ICPR 2014.
    """
    similarities = ops.cast(similarities, "float32")
    shifted = alpha * (similarities - beta)
    positive = ops.softplus(-shifted)
    negative = ops.softplus(cost * shifted)
    return ops.where(pos_mask, positive, ops.where(neg_mask, negative, 0.0))


def binomial_deviance_loss(
    labels,
    embeddings,
    alpha=2.0,
    beta=0.5,
    cost=25.0,
    pair_weights=None,
    balance="separate",
    weight_normalization="count",
    pair_mask=None,
    return_count=False,
):
    """Binomial deviance over the pairs of a batch, on cosine similarities.

    Args:
        alpha: float. Scale `beta_1`. Defaults to `2.0`.
        beta: float. Translation `beta_2`. Defaults to `0.5`.
        cost: float > 0. Cost `C` of negative pairs. Defaults to `25.0`.
        pair_weights: optional float tensor `[B, B]`. Constant per-pair weights.
        balance: `"separate"` or `"joint"` (`reduce_pair_losses`). Defaults to `"separate"`.
        weight_normalization: `"count"` or `"weights"`. Defaults to `"count"`.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Table 1 and Eq. (2).
    """

    def formula(similarities, pos_mask, neg_mask):
        pairs = binomial_deviance_pairs(similarities, pos_mask, neg_mask, alpha, beta, cost)
        return reduce_pair_losses(
            pairs, pos_mask, neg_mask, pair_weights, balance, weight_normalization
        )

    return pair_loss(labels, embeddings, formula, pair_mask=pair_mask, return_count=return_count)


@register_loss("binomial_deviance")
@keras.saving.register_keras_serializable(package="keras_dml")
class BinomialDevianceLoss(MetricLoss):
    """Binomial deviance (BIER form) as a `keras.losses.Loss` over `(labels, embeddings)`.

    Takes `binomial_deviance_loss`'s hyper-parameters, a pair `miner` and `Loss` arguments.
    """

    def __init__(
        self,
        alpha=2.0,
        beta=0.5,
        cost=25.0,
        balance="separate",
        weight_normalization="count",
        miner=None,
        name="binomial_deviance_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        check_choice("balance", balance, PAIR_BALANCES)
        check_choice("weight_normalization", weight_normalization, WEIGHT_NORMALIZATIONS)
        if cost <= 0:
            raise ValueError(f"`cost` must be > 0. Received: cost={cost}")
        super().__init__(
            binomial_deviance_loss,
            name,
            reduction,
            dtype,
            miner,
            alpha=float(alpha),
            beta=float(beta),
            cost=float(cost),
            balance=balance,
            weight_normalization=weight_normalization,
        )
