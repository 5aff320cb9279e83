"""Triplet loss on the triplets a miner chooses: random, semi-hard, batch-hard, all, ..."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import TRIPLET_MINING, triplet_miner
from keras_dml.miners.distance_weighted import DistanceWeightedMiner
from keras_dml.pairs.batch import pair_batch
from keras_dml.pairs.reduction import finish, masked_mean

MINING_STRATEGIES = tuple(TRIPLET_MINING)  # the options of `mining=`


def triplet_values(positive_distances, negative_distances, margin=0.2, soft_margin=False):
    """Per-triplet loss `[d_ap - d_an + m]_+`, or `log(1 + exp(d_ap - d_an))` with `soft_margin`.

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
    """Triplet loss `[d(a, p) - d(a, n) + m]_+`, averaged over the triplets a miner chooses.

    Args:
        margin: float. Margin `m`. Defaults to `0.2`.
        mining: `None` (`"semi-hard"` without `miner`), `"random"`, `"semi-hard"`,
            `"batch-hard"` or `"all"`: builds the miner.
        soft_margin: bool. Replace the hinge by `softplus(d_ap - d_an)`. Defaults to `False`.
        squared: bool. Use squared Euclidean distances. Defaults to `False`.
        seed: int or `keras.random.SeedGenerator` (inside `tf.function`) for a random miner.
        miner: optional triplet miner, registered name or config dict, instead of `mining`.

    Examples:
    >>> loss = triplet_loss([0, 0, 1, 1], keras.random.normal((4, 8)), mining="batch-hard")

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
    embeddings, distances, positives, negatives = pair_batch(
        labels, embeddings, "squared_euclidean" if squared else "euclidean", pair_mask
    )
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

    Takes `triplet_loss`'s hyper-parameters (`seed` an int) and `Loss` arguments.
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
        reduction=REDUCTION,
        dtype=None,
    ):
        if not soft_margin and margin < 0:
            raise ValueError(f"`margin` must be >= 0. Received: margin={margin}")
        self.seed_generator = keras.random.SeedGenerator(seed)
        super().__init__(
            triplet_loss,
            name,
            reduction,
            dtype,
            triplet_miner(mining, miner),
            margin=float(margin),
            soft_margin=bool(soft_margin),
            squared=bool(squared),
            seed=self.seed_generator,
        )
        self.mining = mining
        self.seed = seed
