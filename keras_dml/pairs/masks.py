"""Label masks (bool `[B, B]` pairs, `[B, B, B]` triplets) and masked minima and maxima."""

from keras import ops

from keras_dml.pairs.distances import diagonal_mask

# Finite stand-in for infinity (values and gradients stay finite); far above any distance.
LARGE_VALUE = 1e9


def positive_mask(labels):
    """bool `[B, B]`: pairs `(i, j)` with the same label and `i != j`."""
    labels = ops.reshape(ops.convert_to_tensor(labels), (-1,))
    same = ops.equal(ops.expand_dims(labels, 1), ops.expand_dims(labels, 0))
    return ops.logical_and(same, ops.logical_not(diagonal_mask(ops.shape(labels)[0])))


def negative_mask(labels):
    """bool `[B, B]`: pairs `(i, j)` with different labels."""
    labels = ops.reshape(ops.convert_to_tensor(labels), (-1,))
    return ops.not_equal(ops.expand_dims(labels, 1), ops.expand_dims(labels, 0))


def triplet_mask(labels):
    """bool `[B, B, B]` `[anchor, positive, negative]`: the valid triplets."""
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
