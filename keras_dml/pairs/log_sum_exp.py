"""Masked log-sum-exp, the building block of the softmax-style pair losses."""

from keras import ops

from keras_dml.pairs.masks import LARGE_VALUE


def masked_logsumexp(values, mask, axis=-1, add_one=False):
    """`log(sum_{mask} exp(values))` along `axis`, stable for large values.

    Entries outside `mask` are ignored (they may hold any finite value). A row without a True
    entry gives exactly 0 with zero gradients, so callers can mask it out of a mean.

    Args:
        values: float tensor.
        mask: bool tensor of the same shape. The entries that enter the sum.
        axis: int. The reduced axis. Defaults to `-1`.
        add_one: bool. Add `exp(0) = 1` inside the log: `log(1 + sum exp(values))`.
            Defaults to `False`.

    Returns:
        float32 tensor with `axis` removed.

    Examples:
    >>> masked_logsumexp([[0.0, 100.0, 5.0]], [[True, False, True]])  # log(1 + e^5)
    """
    values = ops.cast(values, "float32")
    mask = ops.convert_to_tensor(mask)
    masked = ops.where(mask, values, -LARGE_VALUE)
    has_entry = ops.any(mask, axis=axis, keepdims=True)
    shift = ops.max(masked, axis=axis, keepdims=True)
    if add_one:
        shift = ops.maximum(shift, 0.0)
    shift = ops.stop_gradient(ops.where(has_entry, shift, 0.0))
    total = ops.sum(ops.where(mask, ops.exp(masked - shift), 0.0), axis=axis, keepdims=True)
    if add_one:
        total = total + ops.exp(-shift)
    else:
        total = ops.where(has_entry, total, 1.0)
    return ops.squeeze(shift + ops.log(total), axis=axis)
