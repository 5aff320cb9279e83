"""Supervised contrastive loss, SupCon (Khosla et al. 2020)."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.ntxent import check_temperature
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import cosine_similarity_matrix, prepare_inputs
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks


def supcon_loss(labels, embeddings, temperature=0.1, pair_mask=None, return_count=False):
    """Supervised contrastive loss (a pair loss), `L^sup_out`.

    For an anchor `i` with positives `P(i)` and all its other samples `A(i)` (positives and
    negatives), cosine similarities `s` and temperature `t`:
    `L_i = -1/|P(i)| sum_{p in P(i)} log(exp(s_ip / t) / sum_{a in A(i)} exp(s_ia / t))`,
    averaged over the anchors with at least one positive and one negative (Eq. 2 sums over the
    anchors; the mean keeps the scale independent of the batch size, as the reference code and
    pytorch-metric-learning's `SupConLoss` do).

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (cosine similarity is scale-invariant).
        temperature: float > 0. The temperature `t`. Defaults to `0.1` (the paper's).
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner); `P(i)`
            and `A(i)` keep only those. Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs of the contributing anchors.
            Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when no anchor has both a positive and a
        negative.

    Examples:
    >>> loss = supcon_loss([0, 0, 1, 1], keras.random.normal((4, 8)))

    References:
        Khosla et al., "Supervised Contrastive Learning", NeurIPS 2020, Eq. (2).
    """
    temperature = check_temperature(temperature)
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    logits = cosine_similarity_matrix(embeddings) / temperature
    others = ops.logical_or(pos_mask, neg_mask)
    log_denominator = masked_logsumexp(logits, others, axis=1)
    num_pos = count_true(pos_mask, axis=1)
    mean_positive = ops.sum(ops.where(pos_mask, logits, 0.0), axis=1) / ops.maximum(num_pos, 1.0)
    anchor_valid = ops.logical_and(num_pos > 0.0, ops.any(neg_mask, axis=1))
    per_anchor = ops.where(anchor_valid, log_denominator - mean_positive, 0.0)
    loss, _ = masked_mean(per_anchor, anchor_valid)
    count = count_true(ops.logical_and(others, ops.expand_dims(anchor_valid, 1)))
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("supcon")
@keras.saving.register_keras_serializable(package="keras_dml")
class SupConLoss(MetricLoss):
    """Supervised contrastive pair loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        temperature: float > 0. Defaults to `0.1`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"supcon_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=SupConLoss(temperature=0.1))

    References:
        Khosla et al., "Supervised Contrastive Learning", NeurIPS 2020, Eq. (2).
    """

    def __init__(
        self,
        temperature=0.1,
        miner=None,
        name="supcon_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        self.temperature = check_temperature(temperature)
        super().__init__(
            supcon_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            temperature=self.temperature,
        )
