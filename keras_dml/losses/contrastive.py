"""Contrastive loss (Hadsell et al. 2006): Euclidean, ABE squared-distance and BIER cosine forms."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import safe_sqrt
from keras_dml.pairs.reduction import PAIR_BALANCES, check_choice, reduce_pair_losses

SIMILARITIES = ("euclidean", "squared_euclidean", "cosine")
DEFAULT_MARGINS = {"euclidean": 1.0, "squared_euclidean": 1.0, "cosine": 0.5}


def contrastive_pairs(squared_distances, pos_mask, neg_mask, margin=1.0):
    """Per-pair contrastive loss `[B, B]`: `d^2` (positive pairs), `max(0, m - d)^2` (negative).

    References:
        Hadsell, Chopra, LeCun, "Dimensionality Reduction by Learning an Invariant Mapping",
        CVPR 2006, Eq. (4), without its factor 1/2.
    """
    squared_distances = ops.cast(squared_distances, "float32")
    distances = safe_sqrt(squared_distances)
    negative = ops.square(ops.relu(margin - distances))
    return ops.where(pos_mask, squared_distances, ops.where(neg_mask, negative, 0.0))


def squared_contrastive_pairs(squared_distances, pos_mask, neg_mask, margin=1.0):
    """Per-pair contrastive loss `[B, B]` hinged on squared distances: `d^2` and `max(0, m - d^2)`.

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018, Eq. 10.
    """
    squared_distances = ops.cast(squared_distances, "float32")
    negative = ops.relu(margin - squared_distances)
    return ops.where(pos_mask, squared_distances, ops.where(neg_mask, negative, 0.0))


def cosine_contrastive_pairs(similarities, pos_mask, neg_mask, margin=0.5):
    """Per-pair contrastive loss `[B, B]` on cosine similarities: `(s - 1)^2` and `max(0, s - m)`.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Table 1 ("Contrastive").
    """
    similarities = ops.cast(similarities, "float32")
    positive = ops.square(similarities - 1.0)
    negative = ops.relu(similarities - margin)
    return ops.where(pos_mask, positive, ops.where(neg_mask, negative, 0.0))


PAIR_FORMS = {
    "euclidean": ("squared_euclidean", contrastive_pairs),
    "squared_euclidean": ("squared_euclidean", squared_contrastive_pairs),
    "cosine": ("cosine", cosine_contrastive_pairs),
}


def contrastive_loss(
    labels,
    embeddings,
    margin=None,
    similarity="euclidean",
    pair_weights=None,
    balance="joint",
    weight_normalization="count",
    pair_mask=None,
    return_count=False,
):
    """Contrastive loss over the positive and negative pairs of a batch.

    Args:
        margin: float or `None` (`1.0`; `0.5` for `"cosine"`). The negative margin.
        similarity: `"euclidean"`, `"squared_euclidean"` or `"cosine"`. Defaults to `"euclidean"`.
        pair_weights: optional float tensor `[B, B]`. Constant per-pair weights.
        balance: `"joint"` or `"separate"` (`reduce_pair_losses`). Defaults to `"joint"`.
        weight_normalization: `"count"` or `"weights"`. Defaults to `"count"`.

    Examples:
    >>> loss = contrastive_loss([0, 0, 1, 1], keras.random.normal((4, 8)), margin=1.0)

    References:
        Hadsell et al., CVPR 2006, Eq. (4); Opitz et al., BIER, TPAMI 2018, Table 1;
        Kim et al., ABE, ECCV 2018, Eq. 10.
    """
    check_choice("similarity", similarity, SIMILARITIES)
    margin = DEFAULT_MARGINS[similarity] if margin is None else float(margin)
    matrix, per_pair = PAIR_FORMS[similarity]

    def formula(values, pos_mask, neg_mask):
        pairs = per_pair(values, pos_mask, neg_mask, margin)
        return reduce_pair_losses(
            pairs, pos_mask, neg_mask, pair_weights, balance, weight_normalization
        )

    return pair_loss(
        labels, embeddings, formula, matrix, pair_mask=pair_mask, return_count=return_count
    )


@register_loss("contrastive")
@keras.saving.register_keras_serializable(package="keras_dml")
class ContrastiveLoss(MetricLoss):
    """Contrastive loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Takes `contrastive_loss`'s hyper-parameters, a pair `miner` and `Loss` arguments.
    """

    def __init__(
        self,
        margin=None,
        similarity="euclidean",
        balance="joint",
        miner=None,
        name="contrastive_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        check_choice("similarity", similarity, SIMILARITIES)
        check_choice("balance", balance, PAIR_BALANCES)
        margin = DEFAULT_MARGINS[similarity] if margin is None else float(margin)
        super().__init__(
            contrastive_loss,
            name,
            reduction,
            dtype,
            miner,
            margin=margin,
            similarity=similarity,
            balance=balance,
        )
