"""The pairs cross-batch memory keeps: batch anchors against the filled memory slots."""

from keras import ops


def memory_pair_mask(batch_size, memory_size, filled, positions):
    """bool `[B + M, B + M]`: the pairs (batch anchor, filled memory slot) of `[batch; memory]`.

    A sample is not paired with its own copy (the slot in `positions` it was written to).
    """
    slots = ops.arange(memory_size, dtype="int32")
    usable = ops.expand_dims(slots < ops.cast(filled, "int32"), 0)
    own_copy = ops.equal(ops.expand_dims(ops.cast(positions, "int32"), 1), slots[None, :])
    batch_to_memory = ops.logical_and(usable, ops.logical_not(own_copy))  # [B, M]
    top = ops.concatenate([ops.zeros((batch_size, batch_size), "bool"), batch_to_memory], axis=1)
    bottom = ops.zeros((memory_size, batch_size + memory_size), "bool")
    return ops.concatenate([top, bottom], axis=0)
