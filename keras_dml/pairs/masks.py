"""Label masks and masked reductions for in-batch pair and triplet mining.

Masks are boolean `[B, B]` (pairs) or `[B, B, B]` (triplets `(anchor, positive, negative)`).
Masked minima and maxima use a large finite sentinel instead of `inf` so that every value and every
gradient stays finite, also when a row has no valid entry.
"""

from keras import ops

from keras_dml.pairs.distances import diagonal_mask

# Finite stand-in for infinity in masked min / max; far above any distance or similarity.
LARGE_VALUE = 1e9


def positive_mask(labels):
    """Pairs `(i, j)` with the same label and `i != j`.

    Args:
        labels: int tensor `[B]`.

    Returns:
        bool tensor `[B, B]`.

    Examples:
    >>> positive_mask([0, 0, 1])  # only (0, 1) and (1, 0) are True
    """
    labels = ops.reshape(ops.convert_to_tensor(labels), (-1,))
    same = ops.equal(ops.expand_dims(labels, 1), ops.expand_dims(labels, 0))
    return ops.logical_and(same, ops.logical_not(diagonal_mask(ops.shape(labels)[0])))


def negative_mask(labels):
    """Pairs `(i, j)` with different labels.

    Args:
        labels: int tensor `[B]`.

    Returns:
        bool tensor `[B, B]`.
    """
    labels = ops.reshape(ops.convert_to_tensor(labels), (-1,))
    return ops.not_equal(ops.expand_dims(labels, 1), ops.expand_dims(labels, 0))


def triplet_mask(labels):
    """Valid triplets `(a, p, n)`: `label[a] == label[p]`, `a != p`, `label[a] != label[n]`.

    Args:
        labels: int tensor `[B]`.

    Returns:
        bool tensor `[B, B, B]` indexed `[anchor, positive, negative]`.
    """
    positives = positive_mask(labels)
    negatives = negative_mask(labels)
    return ops.logical_and(ops.expand_dims(positives, 2), ops.expand_dims(negatives, 1))


def masked_max(values, mask, axis=-1):
    """Maximum over entries where `mask` is True; `-LARGE_VALUE` where there is none."""
    return ops.max(ops.where(mask, values, -LARGE_VALUE), axis=axis)


def masked_min(values, mask, axis=-1):
    """Minimum over entries where `mask` is True; `LARGE_VALUE` where there is none."""
    return ops.min(ops.where(mask, values, LARGE_VALUE), axis=axis)


def count_true(mask, axis=None):
    """Number of True entries as float32."""
    return ops.sum(ops.cast(mask, "float32"), axis=axis)
