"""Binomial deviance loss on cosine similarities (BIER form)."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import cosine_similarity_matrix, prepare_inputs
from keras_dml.pairs.reduction import (
    PAIR_BALANCES,
    WEIGHT_NORMALIZATIONS,
    check_choice,
    finish,
    reduce_pair_losses,
)
from keras_dml.pairs.selected_pairs import selected_pair_masks


def binomial_deviance_pairs(similarities, pos_mask, neg_mask, alpha=2.0, beta=0.5, cost=25.0):
    """Per-pair binomial deviance `log(1 + exp(-(2y - 1) alpha (s - beta) C_y))`.

    `y = 1` and `C_y = 1` for positive pairs, `y = 0` and `C_y = cost` for negative pairs;
    computed with a numerically stable soft-plus. 0 outside the two masks.

    Args:
        similarities: float tensor `[B, B]`. Cosine similarities.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        alpha: float. Scale `beta_1` of the paper. Defaults to `2.0`.
        beta: float. Translation `beta_2` of the paper. Defaults to `0.5`.
        cost: float. Cost `C` of negative pairs. Defaults to `25.0`.

    Returns:
        float32 tensor `[B, B]`.

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
    """Binomial deviance over all pairs of a batch, on cosine similarities.

    With the defaults this is the loss of the BIER reference code: positive and negative pairs
    are averaged separately and the two means added, so both kinds count equally however many
    negatives the batch holds; optional boosting weights multiply the per-pair terms.

    `pair_mask` restricts the sum to the allowed pairs: the positive and the negative means (and
    their counts, and the weight sums of `weight_normalization="weights"`) run over the allowed
    positive and negative pairs only.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (cosine similarity is scale-invariant).
        alpha: float. Scale. Defaults to `2.0`.
        beta: float. Translation. Defaults to `0.5`.
        cost: float. Cost of negative pairs. Defaults to `25.0`.
        pair_weights: optional float tensor `[B, B]`, constant per-pair weights (BIER boosting).
        balance: `"separate"` or `"joint"`, see `reduce_pair_losses`. Defaults to `"separate"`.
        weight_normalization: `"count"` or `"weights"`. Defaults to `"count"`.
        pair_mask: optional bool tensor `[B, B]`: the pairs `(anchor, other)` to use (e.g. from
            a miner or a cross-batch memory). Defaults to `None` (every pair).
        return_count: bool. Also return the int32 number of pairs. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 without a positive or a negative pair.

    Raises:
        ValueError: when `pair_mask` is not `[B, B]`.

    Examples:
    >>> loss = binomial_deviance_loss([0, 0, 1, 1], keras.random.normal((4, 8)))
    >>> keep = np.ones((4, 4), bool); keep[0, 3] = False  # anchor 0 may not use sample 3
    >>> loss = binomial_deviance_loss([0, 0, 1, 1], keras.random.normal((4, 8)), pair_mask=keep)

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Table 1 and Eq. (2).
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    similarities = cosine_similarity_matrix(embeddings)
    pairs = binomial_deviance_pairs(similarities, pos_mask, neg_mask, alpha, beta, cost)
    loss, count = reduce_pair_losses(
        pairs, pos_mask, neg_mask, pair_weights, balance, weight_normalization
    )
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("binomial_deviance")
@keras.saving.register_keras_serializable(package="keras_dml")
class BinomialDevianceLoss(MetricLoss):
    """Binomial deviance (BIER form) as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        alpha: float. Scale. Defaults to `2.0`.
        beta: float. Translation. Defaults to `0.5`.
        cost: float. Cost of negative pairs. Defaults to `25.0`.
        balance: `"separate"` or `"joint"`. Defaults to `"separate"`.
        weight_normalization: `"count"` or `"weights"`. Defaults to `"count"`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"binomial_deviance_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=BinomialDevianceLoss())

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Table 1 and Eq. (2).
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
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        check_choice("balance", balance, PAIR_BALANCES)
        check_choice("weight_normalization", weight_normalization, WEIGHT_NORMALIZATIONS)
        if cost <= 0:
            raise ValueError(f"`cost` must be > 0. Received: cost={cost}")
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.cost = float(cost)
        self.balance = balance
        self.weight_normalization = weight_normalization
        super().__init__(
            binomial_deviance_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            alpha=self.alpha,
            beta=self.beta,
            cost=self.cost,
            balance=balance,
            weight_normalization=weight_normalization,
        )
