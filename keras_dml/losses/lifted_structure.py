"""Lifted structured loss, the smooth form of Oh Song et al. (2016), Eq. 4."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import l2_normalize, pairwise_distances, prepare_inputs
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import LARGE_VALUE, count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks


def lifted_structure_loss(
    labels,
    embeddings,
    margin=1.0,
    normalize_embeddings=False,
    pair_mask=None,
    return_count=False,
):
    """Lifted structured loss (a pair loss): Eq. 4 of Oh Song et al.

    For a positive pair `(i, j)` at Euclidean distance `D_ij`, with the negatives `N(i)` of `i`
    and `N(j)` of `j`:
    `J_ij = log(sum_{k in N(i)} exp(alpha - D_ik) + sum_{l in N(j)} exp(alpha - D_jl)) + D_ij`
    and `J = 1 / (2 |P|) sum_{(i, j) in P} max(0, J_ij)^2` over the positive pairs `P`
    (computed as the mean of `max(0, J_ij)^2 / 2` over ordered pairs, the same value).
    pytorch-metric-learning's `LiftedStructureLoss(neg_margin=alpha, pos_margin=0)` with a
    non-normalising `LpDistance` is this loss; its `GeneralizedLiftedStructureLoss` (Hermans
    et al.'s per-anchor form) is not.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings.
        margin: float. The margin `alpha`. Defaults to `1.0` (the paper's).
        normalize_embeddings: bool. L2-normalise the embeddings first (PML's default
            distance does). Defaults to `False` (the paper's raw distances).
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner).
            Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs used (positive pairs and
            the negatives of their samples). Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when the batch has no positive or no
        negative pair.

    Examples:
    >>> loss = lifted_structure_loss([0, 0, 1, 1], keras.random.normal((4, 8)), margin=1.0)

    References:
        Oh Song, Xiang, Jegelka, Savarese, "Deep Metric Learning via Lifted Structured Feature
        Embedding", CVPR 2016, Eq. (4).
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    if normalize_embeddings:
        embeddings = l2_normalize(embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    distances = pairwise_distances(embeddings)
    has_negative = ops.any(neg_mask, axis=1)
    negatives = masked_logsumexp(margin - distances, neg_mask, axis=1)
    negatives = ops.where(has_negative, negatives, -LARGE_VALUE)
    # log(sum over N(i) + sum over N(j)) = logaddexp of the two rows' log-sum-exps.
    both = ops.logaddexp(ops.expand_dims(negatives, 1), ops.expand_dims(negatives, 0))
    pair_losses = ops.where(pos_mask, ops.square(ops.relu(both + distances)) / 2.0, 0.0)
    loss, num_pos = masked_mean(pair_losses, pos_mask)
    valid = ops.logical_and(ops.any(pos_mask), ops.any(has_negative))
    has_positive = ops.any(pos_mask, axis=1, keepdims=True)
    num_neg = count_true(ops.logical_and(neg_mask, has_positive))
    count = ops.where(valid, ops.cast(num_pos, "float32") + num_neg, 0.0)
    return finish(ops.where(valid, loss, 0.0), count, return_count, embeddings=embeddings)


@register_loss("lifted_structure")
@keras.saving.register_keras_serializable(package="keras_dml")
class LiftedStructureLoss(MetricLoss):
    """Lifted structured pair loss (Eq. 4) as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        margin: float. The margin `alpha`. Defaults to `1.0`.
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"lifted_structure_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=LiftedStructureLoss(margin=1.0))

    References:
        Oh Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding",
        CVPR 2016, Eq. (4).
    """

    def __init__(
        self,
        margin=1.0,
        normalize_embeddings=False,
        miner=None,
        name="lifted_structure_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        self.margin = float(margin)
        self.normalize_embeddings = bool(normalize_embeddings)
        super().__init__(
            lifted_structure_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            margin=self.margin,
            normalize_embeddings=self.normalize_embeddings,
        )
