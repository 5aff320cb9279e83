"""Reductions of per-pair, per-anchor or per-triplet values to `(loss, count)`."""

from keras import ops

from keras_dml.pairs.masks import count_true

PAIR_BALANCES = ("joint", "separate")
WEIGHT_NORMALIZATIONS = ("count", "weights")


def check_choice(name, value, choices):
    """Raises a `ValueError` naming the argument when `value` is not one of `choices`."""
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {choices}. Received: {name}={value!r}")


def masked_mean(values, mask, weights=None, normalize_by="count"):
    """`(mean, num_valid)` of `values` over the True entries of `mask` (0.0 when there is none).

    Args:
        values: float tensor. Entries outside `mask` must be finite.
        mask: bool tensor broadcastable to `values`.
        weights: optional float tensor broadcastable to `values`. Multiplies each term.
        normalize_by: `"count"` (number of valid terms) or `"weights"` (their weight sum).
    """
    check_choice("normalize_by", normalize_by, WEIGHT_NORMALIZATIONS)
    values = ops.cast(values, "float32")
    mask_f = ops.cast(mask, "float32") * ops.ones_like(values)
    count = ops.sum(mask_f)
    terms = values * mask_f
    if weights is not None:
        weights = ops.cast(weights, "float32")
        terms = terms * weights
    total = ops.sum(terms)
    if weights is not None and normalize_by == "weights":
        denominator = ops.sum(mask_f * weights)
        mean = ops.where(denominator > 0.0, total / ops.maximum(denominator, 1e-12), 0.0)
    else:
        mean = total / ops.maximum(count, 1.0)
    return mean, ops.cast(count, "int32")


def reduce_pair_losses(
    pair_losses,
    pos_mask,
    neg_mask,
    pair_weights=None,
    balance="joint",
    weight_normalization="count",
):
    """`(loss, num_valid)`: the mean of `[B, B]` pair losses over the positive and negative pairs.

    Args:
        pair_losses, pos_mask, neg_mask: float `[B, B]` finite values, bool `[B, B]` pair masks.
        pair_weights: optional float tensor `[B, B]`, constants (e.g. BIER's boosting weights).
        balance: `"joint"` (one mean) or `"separate"` (positive mean plus negative mean).
        weight_normalization: `"count"` or `"weights"` (see `masked_mean`).

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Algorithm 1.
    """
    check_choice("balance", balance, PAIR_BALANCES)
    check_choice("weight_normalization", weight_normalization, WEIGHT_NORMALIZATIONS)
    if pair_weights is not None:
        pair_weights = ops.stop_gradient(ops.cast(pair_weights, "float32"))
    num_pos = count_true(pos_mask)
    num_neg = count_true(neg_mask)
    valid = ops.logical_and(num_pos > 0.0, num_neg > 0.0)
    if balance == "separate":
        pos_loss, _ = masked_mean(pair_losses, pos_mask, pair_weights, weight_normalization)
        neg_loss, _ = masked_mean(pair_losses, neg_mask, pair_weights, weight_normalization)
        loss = pos_loss + neg_loss
    else:
        both = ops.logical_or(pos_mask, neg_mask)
        loss, _ = masked_mean(pair_losses, both, pair_weights, weight_normalization)
    loss = ops.where(valid, loss, 0.0)
    num_valid = ops.where(valid, num_pos + num_neg, 0.0)
    return loss, ops.cast(num_valid, "int32")


def mean_over_positive_pairs(pair_losses, pos_mask, neg_mask):
    """`(loss, count)`: the mean over the positive pairs; counted with their anchors' negatives."""
    loss, _ = masked_mean(pair_losses, pos_mask)
    return _with_positive_anchor_count(loss, pos_mask, neg_mask)


def mean_over_queries(per_query, pos_mask, neg_mask):
    """`(loss, count)`: the mean of per-anchor values `[B]` over the anchors with a positive."""
    loss, _ = masked_mean(per_query, ops.any(pos_mask, axis=1))
    return _with_positive_anchor_count(loss, pos_mask, neg_mask)


def _with_positive_anchor_count(loss, pos_mask, neg_mask):
    valid = ops.logical_and(ops.any(pos_mask), ops.any(neg_mask))
    has_positive = ops.any(pos_mask, axis=1, keepdims=True)
    count = count_true(pos_mask) + count_true(ops.logical_and(neg_mask, has_positive))
    return ops.where(valid, loss, 0.0), ops.where(valid, count, 0.0)


def mean_over_anchors(per_anchor, pos_mask, neg_mask):
    """`(loss, count)`: the mean of `[B]` over the anchors with both kinds of pairs; their pairs."""
    anchor_valid = ops.logical_and(ops.any(pos_mask, axis=1), ops.any(neg_mask, axis=1))
    loss, _ = masked_mean(ops.where(anchor_valid, per_anchor, 0.0), anchor_valid)
    pairs = ops.logical_or(pos_mask, neg_mask)
    return loss, count_true(ops.logical_and(pairs, ops.expand_dims(anchor_valid, 1)))


def finish(loss, num_valid, return_count, embeddings=None):
    """`loss` or `(loss, num_valid)` as float32 / int32, NaN for NaN or Inf `embeddings`."""
    loss = ops.cast(loss, "float32")
    if embeddings is not None:
        loss = propagate_nonfinite(loss, embeddings)
    if return_count:
        return loss, ops.cast(num_valid, "int32")
    return loss


def propagate_nonfinite(loss, embeddings):
    """`loss + 0 * sum(embeddings)`: NaN when an embedding is NaN or Inf, unchanged otherwise."""
    total = ops.sum(ops.cast(embeddings, "float32"))
    return ops.cast(loss, "float32") + 0.0 * total
