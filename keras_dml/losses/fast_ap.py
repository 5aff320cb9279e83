"""FastAP (Cakir et al. 2019): average precision of each query, from soft distance histograms."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.reduction import mean_over_queries

# Squared distances between unit vectors lie in [0, 4]: the histogram's range.
MAX_SQUARED_DISTANCE = 4.0


def check_num_bins(num_bins):
    """`num_bins` as an int; a one-line `ValueError` unless it is an integer >= 1."""
    if isinstance(num_bins, bool) or int(num_bins) != num_bins or num_bins < 1:
        raise ValueError(
            f"`num_bins` must be an integer >= 1 (the paper uses 10). Received: num_bins={num_bins}"
        )
    return int(num_bins)


def fast_ap_per_query(distances, pos_mask, neg_mask, num_bins):
    """FastAP `[B]` of every query (row) from soft histograms of its squared distances in `[0, 4]`.

    References:
        Cakir et al., "Deep Metric Learning to Rank", CVPR 2019, Eqs. 6 and 10.
    """
    width = MAX_SQUARED_DISTANCE / num_bins
    centers = ops.linspace(0.0, MAX_SQUARED_DISTANCE, num_bins + 1)
    # pulse[b, i, j]: how much of distance (i, j) falls in bin b.
    pulse = ops.relu(1.0 - ops.abs(distances[None] - centers[:, None, None]) / width)
    positive_hist = ops.transpose(ops.sum(pulse * ops.cast(pos_mask, "float32"), axis=2))
    negative_hist = ops.transpose(ops.sum(pulse * ops.cast(neg_mask, "float32"), axis=2))
    cumulative_positives = ops.cumsum(positive_hist, axis=1)
    cumulative_all = ops.cumsum(positive_hist + negative_hist, axis=1)
    products = positive_hist * cumulative_positives
    usable = ops.logical_and(products > 0.0, cumulative_all > 0.0)
    ratios = ops.where(usable, products / ops.where(usable, cumulative_all, 1.0), 0.0)
    num_positives = ops.sum(ops.cast(pos_mask, "float32"), axis=1)
    return ops.sum(ratios, axis=1) / ops.maximum(num_positives, 1.0)


def fast_ap_loss(labels, embeddings, num_bins=10, pair_mask=None, return_count=False):
    """FastAP loss: `1 - FastAP`, averaged over the queries with a positive.

    Args:
        num_bins: int >= 1. Histogram bins over the squared distances `[0, 4]` of the
            L2-normalised embeddings. Defaults to `10`.

    References:
        Cakir, He, Xia, Kulis, Sclaroff, "Deep Metric Learning to Rank", CVPR 2019, Eqs. 6, 9
        and 10.
    """
    num_bins = check_num_bins(num_bins)

    def formula(distances, pos_mask, neg_mask):
        fast_ap = fast_ap_per_query(distances, pos_mask, neg_mask, num_bins)
        return mean_over_queries(1.0 - fast_ap, pos_mask, neg_mask)

    return pair_loss(
        labels, embeddings, formula, "squared_euclidean", True, pair_mask, return_count
    )


@register_loss("fast_ap")
@keras.saving.register_keras_serializable(package="keras_dml")
class FastAPLoss(MetricLoss):
    """FastAP list-wise loss as a `keras.losses.Loss` over `(labels, embeddings)`."""

    def __init__(
        self, num_bins=10, miner=None, name="fast_ap_loss", reduction=REDUCTION, dtype=None
    ):
        num_bins = check_num_bins(num_bins)
        super().__init__(fast_ap_loss, name, reduction, dtype, miner, num_bins=num_bins)
