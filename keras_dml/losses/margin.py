"""Margin loss with distance-weighted sampling (Wu et al. 2017), fixed beta."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import margin_miner
from keras_dml.pairs.batch import pair_batch
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import check_choice, finish

NORMALIZATIONS = ("nonzero", "pairs")


def margin_pairs(distances, pos_mask, neg_mask, beta=1.2, margin=0.2):
    """Per-pair margin loss `[B, B]`: `[alpha + y_ij (D_ij - beta_i)]_+`, `y` +1 or -1 (negatives).

    References:
        Wu et al., "Sampling Matters in Deep Embedding Learning", ICCV 2017, Sec. 5;
        Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Eq. (9).
    """
    distances = ops.cast(distances, "float32")
    beta = _per_anchor_beta(beta, ops.shape(distances)[0])
    beta = ops.expand_dims(beta, 1)
    positive = ops.relu(margin + distances - beta)
    negative = ops.relu(margin + beta - distances)
    return ops.where(pos_mask, positive, ops.where(neg_mask, negative, 0.0))


def _per_anchor_beta(beta, batch_size):
    beta = ops.cast(ops.convert_to_tensor(beta), "float32")
    if len(beta.shape) == 0:
        return beta * ops.ones((batch_size,), dtype="float32")
    return ops.reshape(beta, (-1,))


def margin_loss(
    labels,
    embeddings,
    beta=1.2,
    margin=0.2,
    nu=0.0,
    sampling=None,
    cutoff=None,
    nonzero_loss_cutoff=None,
    normalize_embeddings=True,
    normalize_by="nonzero",
    seed=None,
    pair_mask=None,
    return_count=False,
    miner=None,
):
    """Margin loss over every positive pair and one mined negative per positive pair.

    `(sum [alpha + y_ij (D_ij - beta_i)]_+ + nu sum beta_i) / N`, `N` the selected pairs with a
    non-zero loss (`"nonzero"`) or all of them (`"pairs"`).

    Args:
        beta: float, scalar tensor or per-anchor tensor `[B]` (trainable). Defaults to `1.2`.
        margin: float. Margin `alpha`. Defaults to `0.2`.
        nu: float. Weight of the beta regulariser. Defaults to `0.0`.
        sampling: `None` (`"distance_weighted"` without `miner`), `"distance_weighted"` or
            `"closest"`: builds the miner.
        cutoff: float or `None` (`0.5`). Lower distance cutoff of the sampler.
        nonzero_loss_cutoff: float or `None` (`1.4`). No negative drawn at or beyond it.
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `True`.
        normalize_by: `"nonzero"` or `"pairs"`. Defaults to `"nonzero"`.
        seed: int or `keras.random.SeedGenerator` (inside `tf.function`) for the sampler.
        miner: optional triplet miner, registered name or config dict, instead of `sampling`.

    Examples:
    >>> loss = margin_loss([0, 0, 1, 1], keras.random.normal((4, 16)), seed=0)

    References:
        Wu, Manmatha, Smola, Krähenbühl, "Sampling Matters in Deep Embedding Learning",
        ICCV 2017, Sec. 4 (sampling) and Sec. 5 (margin loss).
    """
    miner = margin_miner(sampling, cutoff, nonzero_loss_cutoff, miner)
    check_choice("normalize_by", normalize_by, NORMALIZATIONS)
    embeddings, distances, pos_mask, neg_mask = pair_batch(
        labels, embeddings, "euclidean", pair_mask, normalize_embeddings
    )
    embedding_dim = embeddings.shape[-1]
    batch_size = ops.shape(distances)[0]
    beta = _per_anchor_beta(beta, batch_size)

    selection = miner.mine(distances, pos_mask, neg_mask, embedding_dim=embedding_dim, seed=seed)
    neg_used = ops.logical_and(pos_mask, selection.valid)
    neg_distances = ops.take_along_axis(distances, selection.negative_index, axis=1)

    beta_column = ops.expand_dims(beta, 1)
    pos_losses = ops.where(pos_mask, ops.relu(margin + distances - beta_column), 0.0)
    neg_losses = ops.where(neg_used, ops.relu(margin + beta_column - neg_distances), 0.0)
    num_pos = count_true(pos_mask)
    num_neg = count_true(neg_used)
    num_pairs = num_pos + num_neg
    if normalize_by == "nonzero":
        normalizer = count_true(pos_losses > 0.0) + count_true(neg_losses > 0.0)
    else:
        normalizer = num_pairs
    total = ops.sum(pos_losses) + ops.sum(neg_losses)
    if nu:
        pairs_per_anchor = count_true(pos_mask, axis=1) + count_true(neg_used, axis=1)
        total = total + nu * ops.sum(beta * pairs_per_anchor)
    valid = ops.logical_and(num_pos > 0.0, num_neg > 0.0)
    loss = ops.where(valid, total / ops.maximum(normalizer, 1.0), 0.0)
    count = ops.where(valid, num_pairs, 0.0)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("margin")
@keras.saving.register_keras_serializable(package="keras_dml")
class MarginLoss(MetricLoss):
    """Margin loss with a fixed beta as a `keras.losses.Loss` over `(labels, embeddings)`.

    Takes `margin_loss`'s hyper-parameters (`beta` a float, `seed` an int, no `nu`), `Loss`'s.
    """

    def __init__(
        self,
        beta=1.2,
        margin=0.2,
        sampling=None,
        cutoff=None,
        nonzero_loss_cutoff=None,
        normalize_embeddings=True,
        normalize_by="nonzero",
        seed=None,
        miner=None,
        name="margin_loss",
        reduction=REDUCTION,
        dtype=None,
    ):
        check_margin_arguments(margin, normalize_by)
        self.seed_generator = keras.random.SeedGenerator(seed)
        super().__init__(
            margin_loss,
            name,
            reduction,
            dtype,
            margin_miner(sampling, cutoff, nonzero_loss_cutoff, miner),
            beta=float(beta),
            margin=float(margin),
            normalize_embeddings=bool(normalize_embeddings),
            normalize_by=normalize_by,
            seed=self.seed_generator,
        )
        self.seed = seed


def check_margin_arguments(margin, normalize_by):
    """Raises a one-line `ValueError` for a negative margin or an unknown `normalize_by`."""
    check_choice("normalize_by", normalize_by, NORMALIZATIONS)
    if margin < 0:
        raise ValueError(f"`margin` must be >= 0. Received: margin={margin}")
