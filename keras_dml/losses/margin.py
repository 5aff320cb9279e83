"""Margin loss with distance-weighted sampling (Wu et al. 2017), fixed beta.

For a learnable beta (global or per class) use the `LearnableMarginLoss` layer, which owns the
beta weights and calls `margin_loss` with them.
"""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import margin_miner
from keras_dml.pairs.distances import l2_normalize, pairwise_distances, prepare_inputs
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import check_choice, finish
from keras_dml.pairs.selected_pairs import selected_pair_masks

NORMALIZATIONS = ("nonzero", "pairs")


def margin_pairs(distances, pos_mask, neg_mask, beta=1.2, margin=0.2):
    """Per-pair margin loss `[alpha + y_ij (D_ij - beta)]_+`, `y = +1` positive, `-1` negative.

    Args:
        distances: float tensor `[B, B]`. Euclidean distances.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        beta: float, scalar tensor or float tensor `[B]` (per anchor). Boundary between
            positive and negative distances. Defaults to `1.2`.
        margin: float. Margin `alpha`. Defaults to `0.2`.

    Returns:
        float32 tensor `[B, B]`, 0 outside the two masks.

    References:
        Wu et al., "Sampling Matters in Deep Embedding Learning", ICCV 2017, Sec. 5 (margin
        loss); Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Eq. (9).
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
    """Margin loss over all positive pairs and one selected negative per positive pair.

    `loss = (sum_pairs [alpha + y_ij (D_ij - beta_i)]_+ + nu * sum_pairs beta_i) / N`, where the
    pairs are every positive pair `(i, j)` and, for each of them, the negative `(i, k)` a triplet
    miner chooses (distance-weighted sampling, the closest one beyond `cutoff`, or any
    `keras_dml.miners.TripletMiner` with one negative per slot), `beta_i` is the beta of the
    anchor, and `N` is the number of pairs with non-zero loss (Wu et al. reference code) or of all
    selected pairs.

    `pair_mask` restricts both kinds of pairs: the positive pairs are the allowed ones, and each
    is matched with a negative drawn (or, with `"closest"`, picked) among the anchor's allowed
    negatives only. Anchors without an allowed negative contribute nothing, and `N` counts only
    the selected pairs. With `[batch; memory]` and a mask keeping (batch anchor, memory
    reference) pairs this is the margin loss against a cross-batch memory (Wang et al. 2020).

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings.
        beta: float, scalar tensor or tensor `[B]` of per-anchor betas (e.g. from
            `LearnableMarginLoss.beta_for(labels)`); gradients flow into tensors. Defaults to `1.2`.
        margin: float. Margin `alpha`. Defaults to `0.2`.
        nu: float. Weight of the beta regulariser `nu * beta_i` per pair (Wu et al., Sec. 5).
            Defaults to `0.0`.
        sampling: `"distance_weighted"` (Wu et al., `DistanceWeightedMiner`) or `"closest"`
            (closest negatives at distance >= `cutoff`, D&C reference code,
            `ClosestNegativeMiner`). Defaults to `None`: `"distance_weighted"` unless `miner`.
        cutoff: float. Distance clip of the sampler. Defaults to `None` (`0.5`).
        nonzero_loss_cutoff: float. Negatives at or beyond this distance are not sampled
            (distance-weighted sampling only). Defaults to `None` (`1.4`).
        normalize_embeddings: bool. L2-normalise the embeddings first; distance-weighted
            sampling assumes the unit sphere. Defaults to `True`.
        normalize_by: `"nonzero"` (pairs with loss > 0) or `"pairs"` (all selected pairs).
            Defaults to `"nonzero"`.
        seed: int or `keras.random.SeedGenerator` for the sampler. Inside `tf.function` pass a
            `SeedGenerator` (the loss classes own one). Defaults to `None`.
        pair_mask: optional bool tensor `[B, B]`: the pairs `(anchor, other)` the loss may use
            (e.g. from a miner or a cross-batch memory). Defaults to `None` (every pair).
        return_count: bool. Also return the int32 number of selected pairs (positive plus
            negative). Defaults to `False`.
        miner: optional triplet miner, registered name or config dict choosing the negative
            of each positive pair, instead of `sampling`. Defaults to `None`.

    Returns:
        float32 scalar, or `(loss, num_valid)` when `return_count=True`. A batch with no
        positive pair or no selectable negative gives 0.0 and `num_valid = 0`.

    Raises:
        ValueError: when `pair_mask` is not `[B, B]`, the embedding dimension is unknown
            with distance-weighted sampling, or for `miner` with a sampling option.

    Examples:
    >>> seed = keras.random.SeedGenerator(0)
    >>> loss = margin_loss([0, 0, 1, 1], keras.random.normal((4, 16)), seed=seed)
    >>> keep = np.ones((4, 4), bool); keep[0, 3] = False  # anchor 0 may not use sample 3
    >>> loss = margin_loss([0, 0, 1, 1], keras.random.normal((4, 16)), pair_mask=keep)

    References:
        Wu, Manmatha, Smola, Krähenbühl, "Sampling Matters in Deep Embedding Learning",
        ICCV 2017, Sec. 4 (sampling) and Sec. 5 (margin loss, learnable beta).
    """
    miner = margin_miner(sampling, cutoff, nonzero_loss_cutoff, miner)
    check_choice("normalize_by", normalize_by, NORMALIZATIONS)
    labels, embeddings = prepare_inputs(labels, embeddings)
    embedding_dim = embeddings.shape[-1]
    if normalize_embeddings:
        embeddings = l2_normalize(embeddings)
    distances = pairwise_distances(embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
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

    For a learnable beta use `keras_dml.losses.LearnableMarginLoss` (a layer the model owns).

    Args:
        beta: float. Fixed boundary beta. Defaults to `1.2`.
        margin: float. Margin alpha. Defaults to `0.2`.
        sampling: `None`, `"distance_weighted"` or `"closest"`: the miner by its former
            option name. Defaults to `None` (`"distance_weighted"` unless `miner` is given).
        cutoff: float. The sampler's lower cutoff. Defaults to `None` (`0.5`).
        nonzero_loss_cutoff: float. Distance-weighted sampling's upper cutoff. Defaults to
            `None` (`1.4`).
        normalize_embeddings: bool. Defaults to `True`.
        normalize_by: `"nonzero"` or `"pairs"`. Defaults to `"nonzero"`.
        seed: optional int. Seed of the sampler's generator.
        miner: optional `keras_dml.miners.TripletMiner`, registered name or config dict,
            instead of `sampling` and its cutoffs. Defaults to `None`.
        name: str. Defaults to `"margin_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=MarginLoss(beta=1.2, margin=0.2, seed=0))

    References:
        Wu et al., "Sampling Matters in Deep Embedding Learning", ICCV 2017, Sec. 5 (margin
        loss); Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Eq. (9).
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
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        check_margin_arguments(margin, normalize_by)
        self.beta = float(beta)
        self.margin = float(margin)
        self.normalize_embeddings = bool(normalize_embeddings)
        self.normalize_by = normalize_by
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        super().__init__(
            margin_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            beta=self.beta,
            margin=self.margin,
            miner=margin_miner(sampling, cutoff, nonzero_loss_cutoff, miner),
            normalize_embeddings=self.normalize_embeddings,
            normalize_by=normalize_by,
            seed=self.seed_generator,
        )


def check_margin_arguments(margin, normalize_by):
    """Validates the margin-loss hyper-parameters up front with messages naming the argument.

    The sampler's cutoffs are the miner's arguments, checked where it is built
    (`keras_dml.miners.aliases.margin_miner`).
    """
    check_choice("normalize_by", normalize_by, NORMALIZATIONS)
    if margin < 0:
        raise ValueError(f"`margin` must be >= 0. Received: margin={margin}")
