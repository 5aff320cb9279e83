"""`CrossBatchMemory` (XBM, Wang et al. 2020): a pair loss between the batch and a FIFO memory."""

import keras
import numpy as np
from keras import ops

from keras_dml.losses.cross_batch_memory.arguments import (
    memory_miner,
    positive_int,
    wrappable_loss,
)
from keras_dml.losses.cross_batch_memory.footprint import check_memory_fits
from keras_dml.losses.cross_batch_memory.memory_loss import loss_against_memory
from keras_dml.losses.cross_batch_memory.memory_queue import MemoryQueue
from keras_dml.losses.cross_batch_memory.pair_mask import memory_pair_mask
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.reduction import propagate_nonfinite
from keras_dml.pairs.references import ReferenceBlock
from keras_dml.utils.argument_config import ArgumentConfig


@register_loss("cross_batch_memory")
@keras.saving.register_keras_serializable(package="keras_dml")
class CrossBatchMemory(MemoryQueue, ArgumentConfig, keras.layers.Layer):
    """Cross-batch memory: a pair loss between the current batch and the last `M` embeddings.

    Called as `layer(labels, embeddings, return_count=False, memory=0, update=True)`: `memory`
    picks one of the memories, `update=False` leaves the memory and its warm-up as they are.

    Args:
        loss: the wrapped pair loss (registered name, `{"name": ...}` dict or `MetricLoss`
            whose function takes `pair_mask`).
        memory_size: int. Number of slots `M`, at least the (global) batch size.
        embedding_dim: int. Width of the stored embeddings.
        num_memories: int. Independent memories, one per loss call site. Defaults to `1`.
        warmup_steps: int. Calls per memory on the plain batch loss first. Defaults to `0`.
        miner: optional pair miner, triplet miner or callable `(labels, embeddings, ref_labels,
            ref_embeddings) -> bool [B, M]`. Defaults to `None`.
        name: str. Defaults to `"cross_batch_memory"`.
        **kwargs: passed to `keras.layers.Layer`.

    Examples:
    >>> xbm = CrossBatchMemory({"name": "contrastive"}, memory_size=256, embedding_dim=64)

    References:
        Wang, Zhang, Huang, Scott, "Cross-Batch Memory for Embedding Learning", CVPR 2020,
        Algorithm 1.
    """

    def __init__(
        self,
        loss,
        memory_size,
        embedding_dim,
        num_memories=1,
        warmup_steps=0,
        miner=None,
        name="cross_batch_memory",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        self.inner_loss = wrappable_loss(loss)
        self.memory_size = positive_int("memory_size", memory_size)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.num_memories = positive_int("num_memories", num_memories)
        self.warmup_steps = int(warmup_steps)
        if self.warmup_steps < 0:
            raise ValueError(f"`warmup_steps` must be >= 0. Received: warmup_steps={warmup_steps}")
        self.miner = memory_miner(miner, self.inner_loss)
        self._add_memory_state()
        self._checked_batch = None  # the batch size check_memory_fits passed
        self.built = True  # the state is complete; nothing depends on the input shape

    def call(self, labels, embeddings, return_count=False, memory=0, update=True):
        labels = ops.cast(ops.reshape(labels, (-1,)), "int32")
        embeddings = self._padded(ops.cast(embeddings, "float32"))
        # A block that cannot fit is refused before any step runs (an unknown batch size counts
        # as 1, the least it can be); once per batch size, as eager backends call this each step.
        batch = embeddings.shape[0] or 1
        if batch != self._checked_batch:
            check_memory_fits(self.inner_loss, self.miner, batch, self.memory_size)
            self._checked_batch = batch
        key = ops.one_hot(ops.cast(memory, "int32"), self.num_memories, dtype="int32")
        warm = ops.sum(self.steps.value * key) >= self.warmup_steps
        update = ops.convert_to_tensor(update, "bool")
        self.steps.assign(self.steps.value + key * ops.cast(update, "int32"))

        # Algorithm 1: enqueue the batch first, then the loss against the memory holding it.
        start = ops.sum(self.write_index.value * key)
        batch_size = ops.shape(labels)[0]
        positions = (start + ops.arange(batch_size, dtype="int32")) % self.memory_size
        stored_embeddings, stored_labels = self._enqueued(key, positions, labels, embeddings)
        filled = ops.minimum(ops.sum(self.filled.value * key) + batch_size, self.memory_size)
        # The memory is a constant: only the batch's own (anchor) embeddings carry gradients.
        references = ops.stop_gradient(self._select(stored_embeddings, key))
        reference_labels = self._select(stored_labels, key)
        pairs = memory_pair_mask(self.memory_size, filled, positions)
        block = ReferenceBlock(reference_labels, references, pairs)
        memory_loss, memory_count = loss_against_memory(
            self.inner_loss, self.miner, labels, embeddings, block
        )
        enqueue = ops.logical_and(warm, update)
        self._commit(enqueue, key, stored_embeddings, stored_labels, start + batch_size, filled)
        batch_loss, batch_count = self.inner_loss.compute(labels, embeddings, return_count=True)
        loss = ops.where(warm, memory_loss, ops.cast(batch_loss, "float32"))
        count = ops.where(warm, memory_count, ops.cast(batch_count, "int32"))
        loss = propagate_nonfinite(loss, embeddings)
        # A batch larger than the memory would overwrite its own slots: refused when its size is
        # known when traced, NaN otherwise (a gathered global batch), never silently wrong.
        loss = ops.where(batch_size > self.memory_size, float("nan"), loss)
        return (loss, count) if return_count else loss

    def reset_memory(self, keys=None, restart_warmup=True):
        """Empties the memories `keys` (`None`: all); `restart_warmup` restarts their warm-up."""
        emptied = np.ones(self.num_memories, bool)
        if keys is not None:
            keys = [int(key) for key in keys]
            outside = [key for key in keys if not 0 <= key < self.num_memories]
            if outside:
                raise ValueError(
                    f"Memory keys must be in [0, {self.num_memories}) (num_memories="
                    f"{self.num_memories}). Received: keys={keys}"
                )
            emptied = np.isin(np.arange(self.num_memories), keys)
        self._empty_memories(emptied, restart_warmup)

    def compute_output_spec(self, labels, embeddings, return_count=False, memory=0, update=True):
        loss = keras.KerasTensor((), dtype="float32")
        return (loss, keras.KerasTensor((), dtype="int32")) if return_count else loss
