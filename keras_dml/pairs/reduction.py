"""Reductions of per-pair / per-triplet loss values to a scalar, with the count of valid terms.

Every reduction returns `(loss, num_valid)`: a finite float32 scalar that is exactly 0 (with zero
gradients) when nothing is valid, and the int32 number of valid terms, which models can log.
"""

from keras import ops

from keras_dml.pairs.masks import count_true

PAIR_BALANCES = ("joint", "separate")
WEIGHT_NORMALIZATIONS = ("count", "weights")


def check_choice(name, value, choices):
    """Raises a `ValueError` naming the argument when `value` is not one of `choices`."""
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {choices}. Received: {name}={value!r}")


def masked_mean(values, mask, weights=None, normalize_by="count"):
    """Mean of `values` over the True entries of `mask`.

    Args:
        values: float tensor. Loss terms; entries outside `mask` are ignored (they must be finite).
        mask: bool tensor broadcastable to `values`.
        weights: optional float tensor broadcastable to `values`. Multiplies each term.
        normalize_by: `"count"` divides the (weighted) sum by the number of valid terms,
            `"weights"` by the sum of the weights of the valid terms. Defaults to `"count"`.

    Returns:
        Tuple `(mean, num_valid)`: float32 scalar (0.0 when no term is valid) and int32 scalar.
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
    """Reduces a `[B, B]` matrix of per-pair losses to a scalar.

    A batch needs at least one positive and one negative pair: pair losses only make sense
    relative to both kinds, so a batch of one class (no negative) or of distinct classes (no
    positive) gives 0.0 and `num_valid = 0`.

    Args:
        pair_losses: float tensor `[B, B]`. Finite per-pair loss values.
        pos_mask: bool tensor `[B, B]`. Positive pairs.
        neg_mask: bool tensor `[B, B]`. Negative pairs.
        pair_weights: optional float tensor `[B, B]`, e.g. BIER's boosting weights. Treated as
            constants (wrapped in `stop_gradient`). Defaults to `None` (all ones).
        balance: `"joint"` averages over all valid pairs together; `"separate"` averages positive
            and negative pairs separately and adds the two means (the BIER reference
            normalisation, which stops the many negatives from swamping the few positives).
            Defaults to `"joint"`.
        weight_normalization: `"count"` divides weighted sums by the number of pairs (BIER
            reference code); `"weights"` by the sum of the pair weights (a weighted mean, BIER
            Algorithm 1). Defaults to `"count"`.

    Returns:
        Tuple `(loss, num_valid)`: float32 scalar and int32 number of pairs used.

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


def finish(loss, num_valid, return_count, embeddings=None):
    """Returns `loss` or `(loss, num_valid)` as float32 / int32 scalars.

    With `embeddings`, the loss is NaN when any embedding is NaN or infinite
    (`propagate_nonfinite`), even where mining or a hinge dropped that embedding from the value.
    """
    loss = ops.cast(loss, "float32")
    if embeddings is not None:
        loss = propagate_nonfinite(loss, embeddings)
    if return_count:
        return loss, ops.cast(num_valid, "int32")
    return loss


def propagate_nonfinite(loss, embeddings):
    """`loss`, made NaN when any embedding is NaN or infinite.

    Mining and hinge terms (`max(0, .)`, masks, hardest-pair selection) can drop a NaN embedding
    from the value while its gradient stays NaN, so a diverged model would report a finite loss.
    Adding `0 * sum(embeddings)` keeps the value and gradient of finite inputs unchanged and turns
    both into NaN otherwise (`0 * inf` and `0 * nan` are NaN), so the training log shows it.

    Args:
        loss: float scalar tensor.
        embeddings: float tensor `[B, D]`.

    Returns:
        float32 scalar tensor.

    Examples:
    >>> float(propagate_nonfinite(ops.convert_to_tensor(0.2), [[float("nan"), 1.0]]))
    nan
    """
    total = ops.sum(ops.cast(embeddings, "float32"))
    return ops.cast(loss, "float32") + 0.0 * total
