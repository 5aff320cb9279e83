"""The pairs cross-batch memory keeps: batch anchors against the filled memory slots."""

from keras import ops


def memory_pair_mask(batch_size, memory_size, filled, positions):
    """The pairs of `[batch; memory]` that XBM's loss uses: batch anchors x filled memory slots.

    Rows `0..B-1` are the batch (anchors), rows `B..B+M-1` the memory (references only). A pair
    `(i, B + j)` is kept when slot `j` is filled and is not the slot that holds sample `i`
    itself (the batch was enqueued first, so its own copy is in the memory).

    Args:
        batch_size: int or int scalar tensor `B`.
        memory_size: int `M`.
        filled: int scalar tensor. Number of filled slots (the first `filled` are used).
        positions: int tensor `[B]`. The slot each batch sample was written to.

    Returns:
        bool tensor `[B + M, B + M]`.
    """
    slots = ops.arange(memory_size, dtype="int32")
    usable = ops.expand_dims(slots < ops.cast(filled, "int32"), 0)
    own_copy = ops.equal(ops.expand_dims(ops.cast(positions, "int32"), 1), slots[None, :])
    batch_to_memory = ops.logical_and(usable, ops.logical_not(own_copy))  # [B, M]
    top = ops.concatenate([ops.zeros((batch_size, batch_size), "bool"), batch_to_memory], axis=1)
    bottom = ops.zeros((memory_size, batch_size + memory_size), "bool")
    return ops.concatenate([top, bottom], axis=0)
