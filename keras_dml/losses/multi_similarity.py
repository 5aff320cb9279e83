"""Multi-similarity loss on the pairs its miner keeps (Wang et al. 2019)."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.miners.aliases import multi_similarity_miner
from keras_dml.pairs.distances import cosine_similarity_matrix, prepare_inputs
from keras_dml.pairs.masks import LARGE_VALUE, count_true
from keras_dml.pairs.reduction import finish
from keras_dml.pairs.selected_pairs import selected_pair_masks


def _log_one_plus_sum_exp(values, mask):
    """`log(1 + sum_{mask} exp(values))` along the last axis, stable for large values."""
    masked = ops.where(mask, values, -LARGE_VALUE)
    shift = ops.stop_gradient(ops.maximum(ops.max(masked, axis=-1, keepdims=True), 0.0))
    total = ops.exp(-shift) + ops.sum(
        ops.where(mask, ops.exp(masked - shift), 0.0), axis=-1, keepdims=True
    )
    return ops.squeeze(shift + ops.log(total), axis=-1)


def multi_similarity_loss(
    labels,
    embeddings,
    alpha=2.0,
    beta=50.0,
    base=1.0,
    epsilon=None,
    pair_mask=None,
    return_count=False,
    miner=None,
):
    """Multi-similarity loss on cosine similarities with multi-similarity pair mining.

    Mining (Sec. 4, `keras_dml.miners.MultiSimilarityMiner`): for anchor `i`, a negative pair is
    kept if `S_ik + epsilon > min_{y_j = y_i} S_ij`, a positive pair if
    `S_ij - epsilon < max_{y_k != y_i} S_ik`. Any pair miner can take its place (`miner=`;
    `AllPairsMiner` keeps every pair).
    Loss (`L_MS`, Sec. 4): `1/B sum_i [1/alpha log(1 + sum_{P_i} exp(-alpha (S_ij - lambda)))
    + 1/beta log(1 + sum_{N_i} exp(beta (S_ik - lambda)))]`, where anchors with an empty mined
    positive or negative set contribute 0 (as in the reference code).

    `pair_mask` restricts the pairs before mining: the hardest positive and negative of anchor
    `i` (the `min` and `max` above) and the mined sets `P_i`, `N_i` range over the allowed pairs
    `(i, j)` only, and the `1/B` becomes one over the number of anchors, the rows with at least
    one allowed pair `(i, j)`, `j != i` (so rows the mask leaves empty, e.g. the memory rows
    of a cross-batch memory, are not anchors). This is pytorch-metric-learning's
    `MultiSimilarityMiner` plus `MultiSimilarityLoss` on `ref_emb` when the mask keeps
    (anchor, reference) pairs.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (cosine similarity is scale-invariant).
        alpha: float. Positive scale. Defaults to `2.0`.
        beta: float. Negative scale. Defaults to `50.0`.
        base: float. Similarity offset `lambda`. Defaults to `1.0`.
        epsilon: float. Mining margin of the multi-similarity miner. Defaults to `None`
            (`0.1` unless `miner` is given).
        pair_mask: optional bool tensor `[B, B]`: the pairs `(anchor, other)` to mine from
            (e.g. from a cross-batch memory). Defaults to `None` (every pair).
        return_count: bool. Also return the int32 number of mined pairs of contributing
            anchors. Defaults to `False`.
        miner: optional pair miner, registered name or config dict, instead of `epsilon`.
            Defaults to `None`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when no anchor has mined pairs.

    Raises:
        ValueError: when `pair_mask` is not `[B, B]`, or for both `epsilon` and `miner`.

    Examples:
    >>> loss = multi_similarity_loss([0, 0, 1, 1], keras.random.normal((4, 8)))
    >>> anchors_vs_refs = np.zeros((6, 6), bool); anchors_vs_refs[:2, 2:] = True
    >>> loss = multi_similarity_loss(
    ...     [0, 1, 0, 0, 1, 1], keras.random.normal((6, 8)), pair_mask=anchors_vs_refs
    ... )  # anchors 0 and 1 against references 2..5

    References:
        Wang et al., "Multi-Similarity Loss with General Pair Weighting for Deep Metric
        Learning", CVPR 2019, Sec. 4 (pair mining and the loss `L_MS`).
    """
    miner = multi_similarity_miner(epsilon, miner)
    labels, embeddings = prepare_inputs(labels, embeddings)
    similarities = cosine_similarity_matrix(embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    mined_pos, mined_neg = miner.mine(similarities, pos_mask, neg_mask)
    anchor_valid = ops.logical_and(ops.any(mined_pos, axis=1), ops.any(mined_neg, axis=1))

    positive_term = _log_one_plus_sum_exp(-alpha * (similarities - base), mined_pos) / alpha
    negative_term = _log_one_plus_sum_exp(beta * (similarities - base), mined_neg) / beta
    per_anchor = ops.where(anchor_valid, positive_term + negative_term, 0.0)
    if pair_mask is None:
        num_anchors = ops.cast(ops.shape(similarities)[0], "float32")
    else:
        num_anchors = count_true(ops.any(ops.logical_or(pos_mask, neg_mask), axis=1))
    loss = ops.sum(per_anchor) / ops.maximum(num_anchors, 1.0)
    valid_column = ops.expand_dims(anchor_valid, 1)
    count = count_true(ops.logical_and(ops.logical_or(mined_pos, mined_neg), valid_column))
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("multi_similarity")
@keras.saving.register_keras_serializable(package="keras_dml")
class MultiSimilarityLoss(MetricLoss):
    """Multi-similarity loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        alpha: float. Positive scale. Defaults to `2.0`.
        beta: float. Negative scale. Defaults to `50.0`.
        base: float. Similarity offset lambda. Defaults to `1.0`.
        epsilon: float. Mining margin of the multi-similarity miner. Defaults to `None`
            (`0.1` unless `miner` is given).
        miner: optional `keras_dml.miners.PairMiner`, registered name or config dict, e.g.
            `{"name": "multi_similarity", "epsilon": 0.2}`, instead of `epsilon`.
            Defaults to `None`.
        name: str. Defaults to `"multi_similarity_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the mined pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=MultiSimilarityLoss())

    References:
        Wang et al., CVPR 2019, Sec. 4 (pair mining and the loss `L_MS`).
    """

    def __init__(
        self,
        alpha=2.0,
        beta=50.0,
        base=1.0,
        epsilon=None,
        miner=None,
        name="multi_similarity_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        if alpha <= 0 or beta <= 0:
            raise ValueError(
                f"`alpha` and `beta` must be > 0. Received: alpha={alpha}, beta={beta}"
            )
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.base = float(base)
        super().__init__(
            multi_similarity_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            alpha=self.alpha,
            beta=self.beta,
            base=self.base,
            miner=multi_similarity_miner(epsilon, miner),
        )
