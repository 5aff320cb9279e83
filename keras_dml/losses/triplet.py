"""Triplet loss with in-batch mining: random, semi-hard, batch-hard or all triplets."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.mining import masked_max, masked_min
from keras_dml.losses.pair_selection import selected_pair_masks
from keras_dml.losses.pairwise import pairwise_distances, prepare_inputs
from keras_dml.losses.reduction import check_choice, finish, masked_mean

MINING_STRATEGIES = ("random", "semi-hard", "batch-hard", "all")


def triplet_values(positive_distances, negative_distances, margin=0.2, soft_margin=False):
    """Per-triplet loss `[d_ap - d_an + m]_+`, or `log(1 + exp(d_ap - d_an))` (soft margin).

    Args:
        positive_distances: float tensor. Anchor-positive distances.
        negative_distances: float tensor, broadcastable. Anchor-negative distances.
        margin: float. Margin `m` of the hinge. Ignored with `soft_margin`. Defaults to `0.2`.
        soft_margin: bool. Use the soft-plus form of Hermans et al. Defaults to `False`.

    Returns:
        float32 tensor.

    References:
        Schroff et al., "FaceNet", CVPR 2015, Eq. (1); Hermans et al., "In Defense of the
        Triplet Loss for Person Re-Identification", 2017, Sec. 2 (soft margin).
    """
    difference = positive_distances - negative_distances
    if soft_margin:
        return ops.softplus(difference)
    return ops.relu(difference + margin)


def _negative_per_positive_pair(distances, negatives, mining, seed):
    """Chooses one anchor-negative distance per (anchor, positive) pair: `[B, B]`."""
    d_an = ops.expand_dims(distances, 1)  # [a, 1, n]
    candidates = ops.expand_dims(negatives, 1)  # [a, 1, n]
    if mining == "random":
        batch_size = ops.shape(distances)[0]
        scores = keras.random.uniform((batch_size, batch_size, batch_size), seed=seed)
        scores = ops.where(candidates, scores, -1.0)
        index = ops.argmax(scores, axis=-1)  # [a, p]
        return ops.take_along_axis(distances, ops.cast(index, "int32"), axis=1)
    # Semi-hard (FaceNet Sec. 3.2): the closest negative farther than the positive; without one,
    # the farthest negative (the choice of FaceNet's TensorFlow implementation).
    d_ap = ops.expand_dims(distances, 2)  # [a, p, 1]
    outside = ops.logical_and(candidates, ops.greater(d_an, d_ap))
    has_outside = ops.any(outside, axis=-1)
    semi_hard = masked_min(d_an, outside, axis=-1)
    easiest_inside = masked_max(d_an, candidates, axis=-1)
    return ops.where(has_outside, semi_hard, easiest_inside)


def triplet_loss(
    labels,
    embeddings,
    margin=0.2,
    mining="semi-hard",
    soft_margin=False,
    squared=False,
    seed=None,
    pair_mask=None,
    return_count=False,
):
    """Triplet loss `[d(a, p) - d(a, n) + m]_+` with in-batch mining.

    Mining strategies:
    - `"all"`: every valid triplet `(a, p, n)`, averaged over all of them.
    - `"semi-hard"` (FaceNet): for each positive pair, the closest negative with
      `d(a, n) > d(a, p)`; when none exists, the farthest negative.
    - `"batch-hard"` (Hermans et al.): for each anchor, its farthest positive and closest
      negative; averaged over anchors with at least one positive and one negative.
    - `"random"`: for each positive pair, one uniformly drawn negative (uses `seed`).

    `pair_mask` restricts both sides of every triplet: `(a, p, n)` is a candidate only when
    `pair_mask[a, p]` and `pair_mask[a, n]` are True. Every strategy mines among these pairs
    only (semi-hard, random and batch-hard negatives of `a` among its allowed negatives, its
    positives among its allowed positives); anchors with no allowed positive or no allowed
    negative contribute nothing and the mean counts only the triplets (anchors for
    `"batch-hard"`) kept. With `[batch; memory]` and a mask keeping (batch anchor, memory
    reference) pairs this is the triplet loss against a cross-batch memory (Wang et al. 2020);
    note that `"all"`, `"semi-hard"` and `"random"` hold `[N, N, N]` tensors for `N` rows.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings, used as given.
        margin: float. Margin `m`. Defaults to `0.2`.
        mining: one of `"random"`, `"semi-hard"`, `"batch-hard"`, `"all"`.
            Defaults to `"semi-hard"`.
        soft_margin: bool. Replace the hinge by `softplus(d_ap - d_an)`. Defaults to `False`.
        squared: bool. Use squared Euclidean distances (FaceNet Eq. (1)). Defaults to `False`.
        seed: int or `keras.random.SeedGenerator`, for `"random"` mining. Inside `tf.function`
            pass a `SeedGenerator` (the `TripletLoss` class owns one). Defaults to `None`.
        pair_mask: optional bool tensor `[B, B]`: the pairs `(anchor, other)` triplets may use
            (e.g. from a miner or a cross-batch memory). Defaults to `None` (every pair).
        return_count: bool. Also return the int32 number of triplets (anchors for
            `"batch-hard"`) used. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)` when `return_count=True`; 0.0 when the batch
        has no valid triplet.

    Raises:
        ValueError: when `pair_mask` is not `[B, B]`.

    Examples:
    >>> loss = triplet_loss([0, 0, 1, 1], keras.random.normal((4, 8)), mining="batch-hard")
    >>> keep = np.ones((4, 4), bool); keep[0, 3] = False  # anchor 0 may not use sample 3
    >>> loss = triplet_loss([0, 0, 1, 1], keras.random.normal((4, 8)), pair_mask=keep)

    References:
        Schroff et al., "FaceNet", CVPR 2015, Eq. (1) and Sec. 3.2; Hermans et al., "In Defense
        of the Triplet Loss for Person Re-Identification", arXiv:1703.07737, Eq. (5).
    """
    check_choice("mining", mining, MINING_STRATEGIES)
    labels, embeddings = prepare_inputs(labels, embeddings)
    distances = pairwise_distances(embeddings, squared=squared)
    positives, negatives = selected_pair_masks(labels, pair_mask)
    has_negative = ops.any(negatives, axis=1)
    if mining == "all":
        values = triplet_values(
            ops.expand_dims(distances, 2), ops.expand_dims(distances, 1), margin, soft_margin
        )
        triplets = ops.logical_and(ops.expand_dims(positives, 2), ops.expand_dims(negatives, 1))
        loss, count = masked_mean(values, triplets)
    elif mining == "batch-hard":
        hardest_positive = masked_max(distances, positives, axis=1)
        hardest_negative = masked_min(distances, negatives, axis=1)
        valid = ops.logical_and(ops.any(positives, axis=1), has_negative)
        safe_positive = ops.where(valid, hardest_positive, 0.0)
        safe_negative = ops.where(valid, hardest_negative, 0.0)
        values = triplet_values(safe_positive, safe_negative, margin, soft_margin)
        loss, count = masked_mean(values, valid)
    else:
        negative_distances = _negative_per_positive_pair(distances, negatives, mining, seed)
        valid = ops.logical_and(positives, ops.expand_dims(has_negative, 1))
        negative_distances = ops.where(valid, negative_distances, 0.0)
        values = triplet_values(distances, negative_distances, margin, soft_margin)
        loss, count = masked_mean(values, valid)
    return finish(loss, count, return_count, embeddings=embeddings)


@keras.saving.register_keras_serializable(package="keras_dml")
class TripletLoss(MetricLoss):
    """Triplet loss with in-batch mining as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        margin: float. Margin `m`. Defaults to `0.2`.
        mining: `"random"`, `"semi-hard"`, `"batch-hard"` or `"all"`. Defaults to `"semi-hard"`.
        soft_margin: bool. Soft-plus instead of the hinge. Defaults to `False`.
        squared: bool. Squared Euclidean distances. Defaults to `False`.
        seed: optional int. Seed of the generator used by `"random"` mining.
        name: str. Defaults to `"triplet_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the triplet count.

    Examples:
    >>> model.compile(optimizer="adam", loss=TripletLoss(margin=0.2, mining="batch-hard"))

    References:
        Schroff et al., "FaceNet", CVPR 2015, Eq. (1); Hermans et al., 2017, Eq. (5).
    """

    def __init__(
        self,
        margin=0.2,
        mining="semi-hard",
        soft_margin=False,
        squared=False,
        seed=None,
        name="triplet_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        check_choice("mining", mining, MINING_STRATEGIES)
        if not soft_margin and margin < 0:
            raise ValueError(f"`margin` must be >= 0. Received: margin={margin}")
        self.margin = float(margin)
        self.mining = mining
        self.soft_margin = bool(soft_margin)
        self.squared = bool(squared)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        super().__init__(
            triplet_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            margin=self.margin,
            mining=mining,
            soft_margin=self.soft_margin,
            squared=self.squared,
            seed=self.seed_generator,
        )

    def get_config(self):
        config = super().get_config()
        config.update(
            margin=self.margin,
            mining=self.mining,
            soft_margin=self.soft_margin,
            squared=self.squared,
            seed=self.seed,
        )
        return config
