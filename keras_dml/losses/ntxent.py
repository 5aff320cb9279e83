"""NT-Xent, the normalised temperature-scaled cross-entropy of SimCLR (Chen et al. 2020)."""

import keras

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.log_sum_exp import softmax_against_negatives
from keras_dml.pairs.reduction import mean_over_positive_pairs


def check_temperature(temperature):
    """`temperature` as a float; a one-line `ValueError` unless it is > 0."""
    temperature = float(temperature)
    if not temperature > 0.0:
        raise ValueError(
            "`temperature` must be > 0 (it divides the similarities; try 0.07 or 0.1). "
            f"Received: temperature={temperature}"
        )
    return temperature


def ntxent_loss(labels, embeddings, temperature=0.07, pair_mask=None, return_count=False):
    """NT-Xent loss, averaged over the positive pairs, each against its anchor's negatives.

    `l_ij = -log(exp(s_ij / t) / (exp(s_ij / t) + sum_{k in N(i)} exp(s_ik / t)))`.

    Args:
        temperature: float > 0. The temperature `t`. Defaults to `0.07`.

    References:
        Chen, Kornblith, Norouzi, Hinton, "A Simple Framework for Contrastive Learning of Visual
        Representations", ICML 2020, Eq. (1).
    """
    temperature = check_temperature(temperature)

    def formula(similarities, pos_mask, neg_mask):
        logits = similarities / temperature
        pair_losses = softmax_against_negatives(logits, logits, neg_mask)
        return mean_over_positive_pairs(pair_losses, pos_mask, neg_mask)

    return pair_loss(labels, embeddings, formula, pair_mask=pair_mask, return_count=return_count)


@register_loss("ntxent")
@keras.saving.register_keras_serializable(package="keras_dml")
class NTXentLoss(MetricLoss):
    """NT-Xent (SimCLR) pair loss as a `keras.losses.Loss` over `(labels, embeddings)`."""

    def __init__(
        self, temperature=0.07, miner=None, name="ntxent_loss", reduction=REDUCTION, dtype=None
    ):
        temperature = check_temperature(temperature)
        super().__init__(ntxent_loss, name, reduction, dtype, miner, temperature=temperature)
