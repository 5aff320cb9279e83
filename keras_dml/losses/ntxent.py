"""NT-Xent, the normalised temperature-scaled cross-entropy of SimCLR (Chen et al. 2020)."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import cosine_similarity_matrix, prepare_inputs
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks


def check_temperature(temperature):
    """Returns `temperature` as a float; raises a one-line `ValueError` unless it is > 0."""
    temperature = float(temperature)
    if not temperature > 0.0:
        raise ValueError(
            "`temperature` must be > 0 (it divides the similarities; try 0.07 or 0.1). "
            f"Received: temperature={temperature}"
        )
    return temperature


def ntxent_loss(labels, embeddings, temperature=0.07, pair_mask=None, return_count=False):
    """NT-Xent loss (a pair loss) over every positive pair of a batch.

    For a positive pair `(i, j)` with cosine similarity `s_ij` and the negatives `N(i)` of `i`:
    `l_ij = -log(exp(s_ij / t) / (exp(s_ij / t) + sum_{k in N(i)} exp(s_ik / t)))`, averaged over
    all (ordered) positive pairs. SimCLR's Eq. (1) with its one positive per anchor; with several
    positives, each is scored against the anchor's negatives only (as pytorch-metric-learning's
    `NTXentLoss`), not against the other positives.

    Args:
        labels: int tensor `[B]`. Class labels (SimCLR: one label per source image).
        embeddings: float tensor `[B, D]`. Embeddings (cosine similarity is scale-invariant).
        temperature: float > 0. The temperature `t`. Defaults to `0.07` (PML's default).
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner).
            Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs used (positive pairs and
            the negatives of their anchors). Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when the batch has no positive or no
        negative pair.

    Examples:
    >>> loss = ntxent_loss([0, 0, 1, 1], keras.random.normal((4, 8)), temperature=0.1)

    References:
        Chen, Kornblith, Norouzi, Hinton, "A Simple Framework for Contrastive Learning of Visual
        Representations", ICML 2020, Eq. (1) and Algorithm 1.
    """
    temperature = check_temperature(temperature)
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    logits = cosine_similarity_matrix(embeddings) / temperature
    negatives = ops.expand_dims(masked_logsumexp(logits, neg_mask, axis=1), 1)
    has_negative = ops.any(neg_mask, axis=1, keepdims=True)
    # -log(e^a / (e^a + e^b)) = softplus(b - a), with b the log-sum-exp of the negatives.
    pair_losses = ops.where(has_negative, ops.softplus(negatives - logits), 0.0)
    loss, num_pos = masked_mean(pair_losses, pos_mask)
    valid = ops.logical_and(ops.any(pos_mask), ops.any(neg_mask))
    has_positive = ops.any(pos_mask, axis=1, keepdims=True)
    num_neg = count_true(ops.logical_and(neg_mask, has_positive))
    count = ops.where(valid, ops.cast(num_pos, "float32") + num_neg, 0.0)
    return finish(ops.where(valid, loss, 0.0), count, return_count, embeddings=embeddings)


@register_loss("ntxent")
@keras.saving.register_keras_serializable(package="keras_dml")
class NTXentLoss(MetricLoss):
    """NT-Xent (SimCLR) pair loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        temperature: float > 0. Defaults to `0.07`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"ntxent_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=NTXentLoss(temperature=0.1))

    References:
        Chen et al., "A Simple Framework for Contrastive Learning of Visual Representations",
        ICML 2020, Eq. (1).
    """

    def __init__(
        self,
        temperature=0.07,
        miner=None,
        name="ntxent_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        self.temperature = check_temperature(temperature)
        super().__init__(
            ntxent_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            temperature=self.temperature,
        )
