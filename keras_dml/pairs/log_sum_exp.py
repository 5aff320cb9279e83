"""Masked log-sum-exp, the building block of the softmax-style pair losses."""

from keras import ops

from keras_dml.pairs.masks import LARGE_VALUE


def masked_logsumexp(values, mask, axis=-1, add_one=False):
    """`log(sum_{mask} exp(values))` along `axis`, stable; 0 (zero gradients) where `mask` is empty.

    Args:
        values: float tensor. Entries outside `mask` may hold any finite value.
        mask: bool tensor of the same shape.
        axis: int. The reduced axis. Defaults to `-1`.
        add_one: bool. Compute `log(1 + sum exp(values))`. Defaults to `False`.

    Examples:
    >>> masked_logsumexp([[0.0, 100.0, 5.0]], [[True, False, True]])  # log(1 + e^5)
    """
    values = ops.cast(values, "float32")
    mask = ops.convert_to_tensor(mask)
    masked = ops.where(mask, values, -LARGE_VALUE)
    has_entry = ops.any(mask, axis=axis, keepdims=True)
    if add_one:
        shift = ops.max(masked, axis=axis, keepdims=True, initial=0.0)
    else:
        shift = ops.max(masked, axis=axis, keepdims=True)
    shift = ops.stop_gradient(ops.where(has_entry, shift, 0.0))
    total = ops.sum(ops.where(mask, ops.exp(masked - shift), 0.0), axis=axis, keepdims=True)
    if add_one:
        total = total + ops.exp(-shift)
    else:
        total = ops.where(has_entry, total, 1.0)
    return ops.squeeze(shift + ops.log(total), axis=axis)


def softmax_against_negatives(positive_logits, negative_logits, neg_mask):
    """Per pair `(i, j)`: `log(1 + sum_{k in N(i)} exp(negative_logits_ik - positive_logits_ij))`.

    The cross-entropy `[B, B]` of a positive pair against its anchor's negatives (`neg_mask`); 0 for
    an anchor without negatives.
    """
    negatives = ops.expand_dims(masked_logsumexp(negative_logits, neg_mask, axis=1), 1)
    has_negative = ops.any(neg_mask, axis=1, keepdims=True)
    # -log(e^a / (e^a + e^b)) = softplus(b - a), with b the log-sum-exp of the negatives.
    return ops.where(has_negative, ops.softplus(negatives - positive_logits), 0.0)
