"""Triplet loss on the triplets a miner chooses: random, semi-hard, batch-hard, all, ..."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import TRIPLET_MINING, triplet_miner
from keras_dml.miners.distance_weighted import DistanceWeightedMiner
from keras_dml.pairs.distances import pairwise_distances, prepare_inputs
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks

# The string options of `mining=` (each builds a miner of `keras_dml.miners`).
MINING_STRATEGIES = tuple(TRIPLET_MINING)


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


def triplet_loss(
    labels,
    embeddings,
    margin=0.2,
    mining=None,
    soft_margin=False,
    squared=False,
    seed=None,
    pair_mask=None,
    return_count=False,
    miner=None,
):
    """Triplet loss `[d(a, p) - d(a, n) + m]_+` on the triplets a miner chooses.

    The miner (`keras_dml.miners.TripletMiner`) gets the loss's distance matrix; the string
    options of `mining` build these miners:
    - `"all"` (`AllTripletsMiner`): every valid triplet `(a, p, n)`, averaged over all of them.
    - `"semi-hard"` (`SemiHardMiner`, FaceNet): for each positive pair, the closest negative
      with `d(a, n) > d(a, p)`; when none exists, the farthest negative.
    - `"batch-hard"` (`BatchHardMiner`, Hermans et al.): for each anchor, its farthest
      positive and closest negative; averaged over anchors with a positive and a negative.
    - `"random"` (`RandomNegativeMiner`): for each positive pair, one uniformly drawn
      negative (uses `seed`).
    `DistanceWeightedMiner` and `ClosestNegativeMiner` (the margin loss's samplers) serve too;
    distance-weighted sampling assumes L2-normalised embeddings and plain distances.

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
        mining: `None` or one of `"random"`, `"semi-hard"`, `"batch-hard"`, `"all"`: builds
            the miner. Defaults to `None`: `"semi-hard"` when no `miner` is given.
        soft_margin: bool. Replace the hinge by `softplus(d_ap - d_an)`. Defaults to `False`.
        squared: bool. Use squared Euclidean distances (FaceNet Eq. (1)). Defaults to `False`.
        seed: int or `keras.random.SeedGenerator`, for a random miner. Inside `tf.function`
            pass a `SeedGenerator` (the `TripletLoss` class owns one). Defaults to `None`.
        pair_mask: optional bool tensor `[B, B]`: the pairs `(anchor, other)` triplets may use
            (e.g. from a miner or a cross-batch memory). Defaults to `None` (every pair).
        return_count: bool. Also return the int32 number of triplets (anchors for
            `"batch-hard"`) used. Defaults to `False`.
        miner: optional triplet miner, registered name or config dict (instead of `mining`).
            Defaults to `None`.

    Returns:
        float32 scalar, or `(loss, num_valid)` when `return_count=True`; 0.0 when the batch
        has no valid triplet.

    Raises:
        ValueError: when `pair_mask` is not `[B, B]`, for both `mining` and `miner`, or a
            miner that selects pairs.

    Examples:
    >>> loss = triplet_loss([0, 0, 1, 1], keras.random.normal((4, 8)), mining="batch-hard")
    >>> keep = np.ones((4, 4), bool); keep[0, 3] = False  # anchor 0 may not use sample 3
    >>> loss = triplet_loss([0, 0, 1, 1], keras.random.normal((4, 8)), pair_mask=keep)

    References:
        Schroff et al., "FaceNet", CVPR 2015, Eq. (1) and Sec. 3.2; Hermans et al., "In Defense
        of the Triplet Loss for Person Re-Identification", arXiv:1703.07737, Eq. (5).
    """
    miner = triplet_miner(mining, miner)
    if squared and isinstance(miner, DistanceWeightedMiner):
        raise ValueError(
            "Distance-weighted sampling reads distances on the unit sphere, not squared ones: "
            "use squared=False with DistanceWeightedMiner."
        )
    labels, embeddings = prepare_inputs(labels, embeddings)
    distances = pairwise_distances(embeddings, squared=squared)
    positives, negatives = selected_pair_masks(labels, pair_mask)
    selection = miner.mine(
        distances, positives, negatives, embedding_dim=embeddings.shape[-1], seed=seed
    )
    if selection.negative_index is None:
        values = triplet_values(
            ops.expand_dims(distances, 2), ops.expand_dims(distances, 1), margin, soft_margin
        )
        triplets = ops.logical_and(
            ops.expand_dims(selection.valid, 2), ops.expand_dims(negatives, 1)
        )
        loss, count = masked_mean(values, triplets)
    else:
        negative_distances = ops.take_along_axis(distances, selection.negative_index, axis=1)
        negative_distances = ops.where(selection.valid, negative_distances, 0.0)
        positive_distances = ops.where(selection.valid, distances, 0.0)
        values = triplet_values(positive_distances, negative_distances, margin, soft_margin)
        loss, count = masked_mean(values, selection.valid)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("triplet")
@keras.saving.register_keras_serializable(package="keras_dml")
class TripletLoss(MetricLoss):
    """Triplet loss with in-batch mining as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        margin: float. Margin `m`. Defaults to `0.2`.
        mining: `None`, `"random"`, `"semi-hard"`, `"batch-hard"` or `"all"`: the miner by its
            former option name. Defaults to `None` (`"semi-hard"` unless `miner` is given).
        soft_margin: bool. Soft-plus instead of the hinge. Defaults to `False`.
        squared: bool. Squared Euclidean distances. Defaults to `False`.
        seed: optional int. Seed of the generator a random miner draws with.
        miner: optional `keras_dml.miners.TripletMiner`, registered name or config dict, e.g.
            `{"name": "semi_hard"}`; instead of `mining`. Defaults to `None`.
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
    >>> loss = TripletLoss(miner=keras_dml.miners.SemiHardMiner())  # = mining="semi-hard"

    References:
        Schroff et al., "FaceNet", CVPR 2015, Eq. (1); Hermans et al., 2017, Eq. (5).
    """

    def __init__(
        self,
        margin=0.2,
        mining=None,
        soft_margin=False,
        squared=False,
        seed=None,
        miner=None,
        name="triplet_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
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
            miner=triplet_miner(mining, miner),
            soft_margin=self.soft_margin,
            squared=self.squared,
            seed=self.seed_generator,
        )
