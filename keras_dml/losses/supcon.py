"""Supervised contrastive loss, SupCon (Khosla et al. 2020)."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.ntxent import check_temperature
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import mean_over_anchors


def supcon_loss(labels, embeddings, temperature=0.1, pair_mask=None, return_count=False):
    """Supervised contrastive loss `L^sup_out`, averaged over the anchors with both kinds of pairs.

    `L_i = -1/|P(i)| sum_{p in P(i)} log(exp(s_ip / t) / sum_{a in A(i)} exp(s_ia / t))`.

    Args:
        temperature: float > 0. The temperature `t`. Defaults to `0.1`.

    References:
        Khosla et al., "Supervised Contrastive Learning", NeurIPS 2020, Eq. (2).
    """
    temperature = check_temperature(temperature)

    def formula(similarities, pos_mask, neg_mask):
        logits = similarities / temperature
        log_denominator = masked_logsumexp(logits, ops.logical_or(pos_mask, neg_mask), axis=1)
        num_pos = count_true(pos_mask, axis=1)
        positive_sum = ops.sum(ops.where(pos_mask, logits, 0.0), axis=1)
        mean_positive = positive_sum / ops.maximum(num_pos, 1.0)
        return mean_over_anchors(log_denominator - mean_positive, pos_mask, neg_mask)

    return pair_loss(labels, embeddings, formula, pair_mask=pair_mask, return_count=return_count)


@register_loss("supcon")
@keras.saving.register_keras_serializable(package="keras_dml")
class SupConLoss(MetricLoss):
    """Supervised contrastive pair loss as a `keras.losses.Loss` over `(labels, embeddings)`."""

    def __init__(
        self, temperature=0.1, miner=None, name="supcon_loss", reduction=REDUCTION, dtype=None
    ):
        temperature = check_temperature(temperature)
        super().__init__(supcon_loss, name, reduction, dtype, miner, temperature=temperature)
