"""The pairs cross-batch memory keeps: batch anchors against the filled memory slots."""

from keras import ops


def memory_pair_mask(memory_size, filled, positions):
    """bool `[B, M]`: the pairs (batch anchor, filled memory slot), `B = len(positions)`.

    A sample is not paired with its own copy (the slot in `positions` it was written to).
    """
    slots = ops.arange(memory_size, dtype="int32")
    usable = ops.expand_dims(slots < ops.cast(filled, "int32"), 0)
    own_copy = ops.equal(ops.expand_dims(ops.cast(positions, "int32"), 1), slots[None, :])
    return ops.logical_and(usable, ops.logical_not(own_copy))
