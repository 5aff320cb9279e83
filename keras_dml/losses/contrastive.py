"""Contrastive loss (Hadsell et al. 2006): Euclidean, ABE squared-distance and BIER cosine forms."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import (
    cosine_similarity_matrix,
    pairwise_squared_distances,
    prepare_inputs,
    safe_sqrt,
)
from keras_dml.pairs.reduction import PAIR_BALANCES, check_choice, finish, reduce_pair_losses
from keras_dml.pairs.selected_pairs import selected_pair_masks

SIMILARITIES = ("euclidean", "squared_euclidean", "cosine")
DEFAULT_MARGINS = {"euclidean": 1.0, "squared_euclidean": 1.0, "cosine": 0.5}


def contrastive_pairs(squared_distances, pos_mask, neg_mask, margin=1.0):
    """Per-pair contrastive loss on Euclidean distances.

    `l = d^2` for positive pairs and `l = max(0, m - d)^2` for negative pairs (Hadsell et al.,
    Eq. (4), without its constant factor 1/2), 0 elsewhere.

    Args:
        squared_distances: float tensor `[B, B]`. Squared Euclidean distances.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        margin: float. Distance beyond which negative pairs cost nothing. Defaults to `1.0`.

    Returns:
        float32 tensor `[B, B]`.

    References:
        Hadsell, Chopra, LeCun, "Dimensionality Reduction by Learning an Invariant Mapping",
        CVPR 2006, Eq. (4).
    """
    squared_distances = ops.cast(squared_distances, "float32")
    distances = safe_sqrt(squared_distances)
    negative = ops.square(ops.relu(margin - distances))
    losses = ops.where(pos_mask, squared_distances, ops.where(neg_mask, negative, 0.0))
    return losses


def squared_contrastive_pairs(squared_distances, pos_mask, neg_mask, margin=1.0):
    """Per-pair contrastive loss with the hinge on the squared distance (ABE form).

    `l = d^2` for positive pairs and `l = max(0, m - d^2)` for negative pairs, 0 elsewhere:
    ABE's Eq. 10, where Hadsell et al. hinge the distance itself (`contrastive_pairs`).

    Args:
        squared_distances: float tensor `[B, B]`. Squared Euclidean distances.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        margin: float. Squared distance beyond which negative pairs cost nothing.
            Defaults to `1.0` (the paper's `m_c`).

    Returns:
        float32 tensor `[B, B]`.

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018, Eq. 10.
    """
    squared_distances = ops.cast(squared_distances, "float32")
    negative = ops.relu(margin - squared_distances)
    return ops.where(pos_mask, squared_distances, ops.where(neg_mask, negative, 0.0))


def cosine_contrastive_pairs(similarities, pos_mask, neg_mask, margin=0.5):
    """Per-pair contrastive loss on cosine similarities (BIER form).

    `l = (s - 1)^2` for positive pairs and `l = max(0, s - m)` for negative pairs, 0 elsewhere.

    Args:
        similarities: float tensor `[B, B]`. Cosine similarities.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        margin: float. Similarity below which negative pairs cost nothing. Defaults to `0.5`.

    Returns:
        float32 tensor `[B, B]`.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Table 1 ("Contrastive").
    """
    similarities = ops.cast(similarities, "float32")
    positive = ops.square(similarities - 1.0)
    negative = ops.relu(similarities - margin)
    return ops.where(pos_mask, positive, ops.where(neg_mask, negative, 0.0))


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
    """Contrastive loss over all positive and negative pairs of a batch.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (used as given for `"euclidean"`).
        margin: float. Negative margin; `None` picks 1.0 for `"euclidean"` and
            `"squared_euclidean"` and 0.5 (BIER) for `"cosine"`. Defaults to `None`.
        similarity: `"euclidean"` (Hadsell et al.: hinge on the distance),
            `"squared_euclidean"` (ABE Eq. 10: hinge on the squared distance) or `"cosine"`
            (BIER Table 1). Defaults to `"euclidean"`.
        pair_weights: optional float tensor `[B, B]`, constant per-pair weights (BIER boosting).
        balance: `"joint"` or `"separate"`, see `reduce_pair_losses`. Defaults to `"joint"`.
        weight_normalization: `"count"` or `"weights"`, see `reduce_pair_losses`.
            Defaults to `"count"`.
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner, or
            `CrossBatchMemory`'s batch-to-memory pairs). Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs used. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)` when `return_count=True`. A batch without a
        positive or without a negative pair gives 0.0 and `num_valid = 0`.

    Examples:
    >>> loss = contrastive_loss([0, 0, 1, 1], keras.random.normal((4, 8)), margin=1.0)

    References:
        Hadsell, Chopra, LeCun, CVPR 2006, Eq. (4); Opitz et al., BIER, TPAMI 2018, Table 1;
        Kim et al., ABE, ECCV 2018, Eq. 10.
    """
    check_choice("similarity", similarity, SIMILARITIES)
    margin = DEFAULT_MARGINS[similarity] if margin is None else float(margin)
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    if similarity == "cosine":
        pairs = cosine_contrastive_pairs(
            cosine_similarity_matrix(embeddings), pos_mask, neg_mask, margin
        )
    else:
        form = contrastive_pairs if similarity == "euclidean" else squared_contrastive_pairs
        pairs = form(pairwise_squared_distances(embeddings), pos_mask, neg_mask, margin)
    loss, count = reduce_pair_losses(
        pairs, pos_mask, neg_mask, pair_weights, balance, weight_normalization
    )
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("contrastive")
@keras.saving.register_keras_serializable(package="keras_dml")
class ContrastiveLoss(MetricLoss):
    """Contrastive loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        margin: float. Negative margin; `None` picks 1.0 (`"euclidean"`,
            `"squared_euclidean"`) or 0.5 (`"cosine"`).
        similarity: `"euclidean"`, `"squared_euclidean"` (ABE Eq. 10) or `"cosine"`.
            Defaults to `"euclidean"`.
        balance: `"joint"` or `"separate"`. Defaults to `"joint"`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"contrastive_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=ContrastiveLoss(margin=1.0))

    References:
        Hadsell, Chopra, LeCun, CVPR 2006, Eq. (4); Opitz et al., BIER, TPAMI 2018, Table 1;
        Kim et al., ABE, ECCV 2018, Eq. 10.
    """

    def __init__(
        self,
        margin=None,
        similarity="euclidean",
        balance="joint",
        miner=None,
        name="contrastive_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        check_choice("similarity", similarity, SIMILARITIES)
        check_choice("balance", balance, PAIR_BALANCES)
        margin = DEFAULT_MARGINS[similarity] if margin is None else float(margin)
        super().__init__(
            contrastive_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            margin=margin,
            similarity=similarity,
            balance=balance,
        )
        self.margin = margin
        self.similarity = similarity
        self.balance = balance
