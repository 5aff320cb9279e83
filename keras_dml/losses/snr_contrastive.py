"""Contrastive loss on the signal-to-noise ratio distance (Yuan et al. 2019, DSML)."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import pairwise_squared_distances
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import check_choice, masked_mean

NORMALIZATIONS = ("nonzero", "pairs")
_VARIANCE_EPSILON = 1e-12


def snr_distances(embeddings, references=None):
    """SNR distances `[B, B]` (or `[B, M]` to `references`), `var(h_j - h_i) / var(h_i)` over the
    features (not symmetric).

    References:
        Yuan et al., "Signal-to-Noise Ratio: A Robust Distance Metric for Deep Metric
        Learning", CVPR 2019, Sec. 3.
    """
    embeddings = ops.cast(embeddings, "float32")
    if references is None:
        differences = ops.expand_dims(embeddings, 0) - ops.expand_dims(embeddings, 1)  # [i, j]
        noise = ops.var(differences, axis=-1)
    else:  # var(r - h) = |r~ - h~|^2 / D with centred rows: no [B, M, D] tensor
        centred = embeddings - ops.mean(embeddings, axis=-1, keepdims=True)
        references = ops.cast(references, "float32")
        others = references - ops.mean(references, axis=-1, keepdims=True)
        width = ops.cast(ops.shape(embeddings)[-1], "float32")
        noise = pairwise_squared_distances(centred, references=others) / width
    signal = ops.var(embeddings, axis=-1, keepdims=True)
    return noise / ops.maximum(signal, _VARIANCE_EPSILON)


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
    """Contrastive loss on SNR distances (DSML), each kind of pair averaged on its own.

    `d_ij` (positive pairs) and `max(0, margin - d_ij)` (negative), plus
    `regularization * mean_i |sum_k h_ik|`.

    Args:
        margin: float. Negative margin. Defaults to `1.0`.
        regularization: float >= 0. Weight of the zero-mean penalty. Defaults to `0.0`.
        normalize_by: `"nonzero"` (the pairs with a non-zero loss) or `"pairs"`. Defaults to
            `"nonzero"`.
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.

    References:
        Yuan et al., CVPR 2019, Sec. 3 (SNR distance) and Sec. 4 (DSML).
    """
    check_choice("normalize_by", normalize_by, NORMALIZATIONS)

    def kind_mean(values, mask):
        if normalize_by == "nonzero":
            mask = ops.logical_and(mask, values > 0.0)
        return masked_mean(values, mask)[0]

    def formula(distances, pos_mask, neg_mask):
        positive = kind_mean(ops.where(pos_mask, distances, 0.0), pos_mask)
        negative = kind_mean(ops.where(neg_mask, ops.relu(margin - distances), 0.0), neg_mask)
        num_pos, num_neg = count_true(pos_mask), count_true(neg_mask)
        valid = ops.logical_and(num_pos > 0.0, num_neg > 0.0)
        return ops.where(valid, positive + negative, 0.0), ops.where(valid, num_pos + num_neg, 0.0)

    def zero_mean_penalty(embeddings):
        return regularization * ops.mean(ops.abs(ops.sum(embeddings, axis=1)))

    return pair_loss(
        labels,
        embeddings,
        formula,
        snr_distances,
        normalize_embeddings=normalize_embeddings,
        pair_mask=pair_mask,
        return_count=return_count,
        regularizer=zero_mean_penalty if regularization else None,
    )


@register_loss("snr_contrastive")
@keras.saving.register_keras_serializable(package="keras_dml")
class SNRContrastiveLoss(MetricLoss):
    """Contrastive pair loss on SNR distances (DSML) as a `keras.losses.Loss`.

    Takes `snr_contrastive_loss`'s hyper-parameters, a pair `miner` and `Loss` arguments.
    """

    def __init__(
        self,
        margin=1.0,
        regularization=0.0,
        normalize_by="nonzero",
        normalize_embeddings=False,
        miner=None,
        name="snr_contrastive_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        check_choice("normalize_by", normalize_by, NORMALIZATIONS)
        if float(regularization) < 0.0:
            raise ValueError(
                "`regularization` must be >= 0 (the weight of the zero-mean penalty). "
                f"Received: regularization={regularization}"
            )
        super().__init__(
            snr_contrastive_loss,
            name,
            reduction,
            dtype,
            miner,
            margin=float(margin),
            regularization=float(regularization),
            normalize_by=normalize_by,
            normalize_embeddings=bool(normalize_embeddings),
        )
