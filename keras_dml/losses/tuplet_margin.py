"""Tuplet margin loss (Yu & Tao 2019): a softmax over negatives with an angular margin."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss, check_positive
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import safe_sqrt
from keras_dml.pairs.log_sum_exp import softmax_against_negatives
from keras_dml.pairs.reduction import mean_over_positive_pairs


def tuplet_margin_loss(
    labels, embeddings, margin=0.1, scale=64.0, pair_mask=None, return_count=False
):
    """Tuplet margin loss, averaged over the positive pairs.

    `l_ap = log(1 + sum_n exp(s (cos(theta_an) - cos(theta_ap - beta))))`.

    Args:
        margin: float. The angular margin `beta` in radians. Defaults to `0.1`.
        scale: float > 0. The scale `s`. Defaults to `64.0`.

    References:
        Yu, Tao, "Deep Metric Learning with Tuplet Margin Loss", ICCV 2019, Sec. 3 (without
        the intra-pair variance term).
    """

    def formula(cosines, pos_mask, neg_mask):
        # cos(theta - beta) = cos cos(beta) + sin sin(beta): finite gradients where acos has none.
        sines = safe_sqrt(ops.relu(1.0 - ops.square(cosines)))
        shifted = cosines * ops.cos(margin) + sines * ops.sin(margin)
        pair_losses = softmax_against_negatives(scale * shifted, scale * cosines, neg_mask)
        return mean_over_positive_pairs(pair_losses, pos_mask, neg_mask)

    return pair_loss(labels, embeddings, formula, pair_mask=pair_mask, return_count=return_count)


@register_loss("tuplet_margin")
@keras.saving.register_keras_serializable(package="keras_dml")
class TupletMarginLoss(MetricLoss):
    """Tuplet margin pair loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Takes `tuplet_margin_loss`'s hyper-parameters, a pair `miner` and `Loss` arguments.
    """

    def __init__(
        self,
        margin=0.1,
        scale=64.0,
        miner=None,
        name="tuplet_margin_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        scale = check_positive("scale", scale, "it multiplies the cosines; try 64")
        super().__init__(
            tuplet_margin_loss, name, reduction, dtype, miner, margin=float(margin), scale=scale
        )
