"""FastAP (Cakir et al. 2019): average precision of each query, from soft distance histograms."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import l2_normalize, pairwise_squared_distances, prepare_inputs
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks

# Squared distances between unit vectors lie in [0, 4]: the histogram's range.
MAX_SQUARED_DISTANCE = 4.0


def check_num_bins(num_bins):
    """Returns `num_bins` as an int; raises a one-line `ValueError` unless it is an integer >= 1."""
    if isinstance(num_bins, bool) or int(num_bins) != num_bins or num_bins < 1:
        raise ValueError(
            f"`num_bins` must be an integer >= 1 (the paper uses 10). Received: num_bins={num_bins}"
        )
    return int(num_bins)


def fast_ap_per_query(distances, pos_mask, neg_mask, num_bins):
    """FastAP of every query (row) from its positive and negative distances.

    Each distance is spread over the two nearest of the `num_bins + 1` bin centers
    `0, 4 / num_bins, ..., 4` by a triangular kernel (Eq. 10 of the paper), giving soft histograms
    `h+` (positives) and `h-`; with their cumulative sums `H+` and `H = H+ + H-`,
    `FastAP = 1 / N+ sum_j h+_j H+_j / H_j` (Eq. 6).

    Args:
        distances: float32 tensor `[B, B]`. Squared distances in `[0, 4]`.
        pos_mask: bool tensor `[B, B]`. The positives of each query.
        neg_mask: bool tensor `[B, B]`. The negatives of each query.
        num_bins: int. Number of histogram bins.

    Returns:
        Tuple `(fast_ap [B], num_positives [B])`, float32; `fast_ap` is 0 for a query without
        positives.
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
    fast_ap = ops.sum(ratios, axis=1) / ops.maximum(num_positives, 1.0)
    return fast_ap, num_positives


def fast_ap_loss(labels, embeddings, num_bins=10, pair_mask=None, return_count=False):
    """FastAP loss: `1 - FastAP`, averaged over the queries (anchors) with a positive.

    A list-wise loss: every sample of the batch is a query ranking the others by the squared
    Euclidean distance of the L2-normalised embeddings; its average precision is approximated
    from soft histograms of its positive and negative distances (`fast_ap_per_query`). For
    mining it is a pair loss: `pair_mask` chooses which `(query, other)` pairs enter each
    query's histograms.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        num_bins: int >= 1. Histogram bins over the distance range `[0, 4]`. Defaults to `10`
            (the paper's choice and pytorch-metric-learning's).
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner).
            Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs used (the positives and
            negatives of the queries with a positive). Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when the batch has no positive or no
        negative pair (every ranking is then perfect).

    Examples:
    >>> loss = fast_ap_loss([0, 0, 1, 1], keras.random.normal((4, 8)), num_bins=10)

    References:
        Cakir, He, Xia, Kulis, Sclaroff, "Deep Metric Learning to Rank", CVPR 2019, Eqs. 6, 9
        and 10 (L = 10 bins).
    """
    num_bins = check_num_bins(num_bins)
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    distances = pairwise_squared_distances(l2_normalize(embeddings))
    fast_ap, num_positives = fast_ap_per_query(distances, pos_mask, neg_mask, num_bins)
    has_positive = num_positives > 0.0
    loss, num_queries = masked_mean(1.0 - fast_ap, has_positive)
    valid = ops.logical_and(ops.any(pos_mask), ops.any(neg_mask))
    used_negatives = count_true(ops.logical_and(neg_mask, ops.expand_dims(has_positive, 1)))
    count = ops.where(valid, ops.sum(num_positives) + used_negatives, 0.0)
    return finish(ops.where(valid, loss, 0.0), count, return_count, embeddings=embeddings)


@register_loss("fast_ap")
@keras.saving.register_keras_serializable(package="keras_dml")
class FastAPLoss(MetricLoss):
    """FastAP list-wise loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        num_bins: int >= 1. Histogram bins. Defaults to `10`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"fast_ap_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=FastAPLoss(num_bins=10))

    References:
        Cakir et al., "Deep Metric Learning to Rank", CVPR 2019.
    """

    def __init__(
        self,
        num_bins=10,
        miner=None,
        name="fast_ap_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        self.num_bins = check_num_bins(num_bins)
        super().__init__(
            fast_ap_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            num_bins=self.num_bins,
        )
