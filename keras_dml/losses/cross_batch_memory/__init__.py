"""Cross-batch memory (XBM, Wang et al. 2020): a pair loss between the batch and a FIFO memory."""

from keras_dml.losses.cross_batch_memory.arguments import positive_int, wrappable_loss
from keras_dml.losses.cross_batch_memory.call_sites import (
    check_memory_count,
    is_memory_loss,
    with_memory_count,
)
from keras_dml.losses.cross_batch_memory.footprint import (
    check_memory_fits,
    memory_block_shape,
    memory_loss_bound,
)
from keras_dml.losses.cross_batch_memory.layer import CrossBatchMemory
from keras_dml.losses.cross_batch_memory.pair_mask import memory_pair_mask

__all__ = [
    "CrossBatchMemory",
    "check_memory_count",
    "check_memory_fits",
    "is_memory_loss",
    "memory_block_shape",
    "memory_loss_bound",
    "memory_pair_mask",
    "positive_int",
    "with_memory_count",
    "wrappable_loss",
]
