"""Contrastive loss on the signal-to-noise ratio distance (Yuan et al. 2019, DSML)."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import l2_normalize, prepare_inputs
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import check_choice, finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks

NORMALIZATIONS = ("nonzero", "pairs")
_VARIANCE_EPSILON = 1e-12


def snr_distances(embeddings):
    """SNR distances `d_ij = var(h_j - h_i) / var(h_i)` (anchor `i`; not symmetric).

    Args:
        embeddings: float tensor `[B, D]`. Variances are over the `D` features.

    Returns:
        float32 tensor `[B, B]`, 0 on the diagonal.
    """
    embeddings = ops.cast(embeddings, "float32")
    differences = ops.expand_dims(embeddings, 0) - ops.expand_dims(embeddings, 1)  # [i, j]
    noise = ops.var(differences, axis=-1)
    signal = ops.var(embeddings, axis=-1, keepdims=True)
    return noise / ops.maximum(signal, _VARIANCE_EPSILON)


def _pair_mean(values, mask, nonzero):
    if nonzero:
        mask = ops.logical_and(mask, values > 0.0)
    return masked_mean(values, mask)[0]


def snr_contrastive_loss(
    labels,
    embeddings,
    margin=1.0,
    regularization=0.0,
    normalize_by="nonzero",
    normalize_embeddings=False,
    pair_mask=None,
    return_count=False,
):
    """Contrastive loss (a pair loss) on SNR distances, the DSML loss.

    `l = d_ij` for positive pairs and `l = max(0, margin - d_ij)` for negative pairs, with the
    SNR distance `d_ij = var(h_j - h_i) / var(h_i)`; the positive and the negative terms are
    averaged separately and added, plus `regularization * mean_i |sum_k h_ik|`, the paper's
    penalty keeping the features zero-mean.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings `h`.
        margin: float. Negative margin. Defaults to `1.0`.
        regularization: float >= 0. Weight `lambda` of the zero-mean penalty. Defaults to `0.0`.
        normalize_by: `"nonzero"` averages each kind over its pairs with a non-zero loss
            (pytorch-metric-learning's `AvgNonZeroReducer`), `"pairs"` over all its pairs.
            Defaults to `"nonzero"`.
        normalize_embeddings: bool. L2-normalise the embeddings first (PML's `SNRDistance`
            does by default). Defaults to `False`.
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner).
            Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when the batch has no positive or no
        negative pair.

    Examples:
    >>> loss = snr_contrastive_loss([0, 0, 1, 1], keras.random.normal((4, 8)))

    References:
        Yuan et al., "Signal-to-Noise Ratio: A Robust Distance Metric for Deep Metric
        Learning", CVPR 2019, Sec. 3 (SNR distance) and Sec. 4 (DSML with the contrastive
        loss and the regularisation).
    """
    check_choice("normalize_by", normalize_by, NORMALIZATIONS)
    labels, embeddings = prepare_inputs(labels, embeddings)
    if normalize_embeddings:
        embeddings = l2_normalize(embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    distances = snr_distances(embeddings)
    nonzero = normalize_by == "nonzero"
    positive = _pair_mean(ops.where(pos_mask, distances, 0.0), pos_mask, nonzero)
    negative = _pair_mean(ops.where(neg_mask, ops.relu(margin - distances), 0.0), neg_mask, nonzero)
    loss = positive + negative
    if regularization:
        loss = loss + regularization * ops.mean(ops.abs(ops.sum(embeddings, axis=1)))
    num_pos, num_neg = count_true(pos_mask), count_true(neg_mask)
    valid = ops.logical_and(num_pos > 0.0, num_neg > 0.0)
    count = ops.where(valid, num_pos + num_neg, 0.0)
    return finish(ops.where(valid, loss, 0.0), count, return_count, embeddings=embeddings)


@register_loss("snr_contrastive")
@keras.saving.register_keras_serializable(package="keras_dml")
class SNRContrastiveLoss(MetricLoss):
    """Contrastive pair loss on SNR distances (DSML) as a `keras.losses.Loss`.

    Args:
        margin: float. Negative margin. Defaults to `1.0`.
        regularization: float >= 0. Weight of the zero-mean penalty. Defaults to `0.0`.
        normalize_by: `"nonzero"` or `"pairs"`. Defaults to `"nonzero"`.
        normalize_embeddings: bool. Defaults to `False`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"snr_contrastive_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=SNRContrastiveLoss(margin=1.0))

    References:
        Yuan et al., "Signal-to-Noise Ratio: A Robust Distance Metric for Deep Metric
        Learning", CVPR 2019, Sec. 3 and 4.
    """

    def __init__(
        self,
        margin=1.0,
        regularization=0.0,
        normalize_by="nonzero",
        normalize_embeddings=False,
        miner=None,
        name="snr_contrastive_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        check_choice("normalize_by", normalize_by, NORMALIZATIONS)
        if float(regularization) < 0.0:
            raise ValueError(
                "`regularization` must be >= 0 (the weight of the zero-mean penalty). "
                f"Received: regularization={regularization}"
            )
        self.margin = float(margin)
        self.regularization = float(regularization)
        self.normalize_by = normalize_by
        self.normalize_embeddings = bool(normalize_embeddings)
        super().__init__(
            snr_contrastive_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            margin=self.margin,
            regularization=self.regularization,
            normalize_by=normalize_by,
            normalize_embeddings=self.normalize_embeddings,
        )
