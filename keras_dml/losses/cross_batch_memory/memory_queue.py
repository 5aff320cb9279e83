"""The memory of `CrossBatchMemory`: FIFO queues of embeddings and labels in layer variables."""

import keras
from keras import ops

# Label of an empty memory slot; such slots are also left out by the pair mask.
EMPTY_LABEL = -1


class MemoryQueue:
    """The memory state of `CrossBatchMemory`: `num_memories` circular queues in layer variables.

    `memory_embeddings [K, M, d]`, `memory_labels [K, M]` and, per memory, `write_index`,
    `filled` and `steps`; a memory is chosen by a one-hot int `key [K]`.
    """

    def _add_memory_state(self):
        """Creates the memory variables, every memory empty."""
        shape = (self.num_memories, self.memory_size)
        self.memory_embeddings = self._state("memory_embeddings", (*shape, self.embedding_dim))
        self.memory_labels = self._state("memory_labels", shape, "int32", EMPTY_LABEL)
        self.write_index = self._state("write_index", (self.num_memories,), "int32")
        self.filled = self._state("filled", (self.num_memories,), "int32")
        self.steps = self._state("steps", (self.num_memories,), "int32")

    def _state(self, name, shape, dtype="float32", value=0):
        return self.add_weight(
            name=name,
            shape=shape,
            dtype=dtype,
            initializer=keras.initializers.Constant(value),
            trainable=False,
            autocast=False,
            aggregation="only_first_replica",
        )

    def _padded(self, embeddings):
        """`embeddings [B, d]` zero-padded to the stored width (no distance or product changes)."""
        width = embeddings.shape[-1]
        if width is not None and width > self.embedding_dim:
            raise ValueError(
                f"CrossBatchMemory '{self.name}' stores {self.embedding_dim}-d embeddings but "
                f"received {width}-d ones; build it with embedding_dim={width}."
            )
        if width is not None and self.memory_size < (embeddings.shape[0] or 0):
            raise ValueError(
                f"CrossBatchMemory '{self.name}' has memory_size={self.memory_size}, smaller "
                f"than the batch of {embeddings.shape[0]}; use memory_size >= the global batch."
            )
        if width == self.embedding_dim:
            return embeddings
        return ops.pad(embeddings, [[0, 0], [0, self.embedding_dim - width]])

    def _enqueued(self, key, positions, labels, embeddings):
        """The memory tensors with the batch written at `positions` of memory `key`."""
        selected = self._select(self.memory_embeddings.value, key)
        selected = ops.scatter_update(selected, positions[:, None], embeddings)
        selected_labels = self._select(self.memory_labels.value, key)
        selected_labels = ops.scatter_update(selected_labels, positions[:, None], labels)
        chosen = ops.cast(key, "bool")
        stored = ops.where(chosen[:, None, None], selected[None], self.memory_embeddings.value)
        stored_labels = ops.where(chosen[:, None], selected_labels[None], self.memory_labels.value)
        return stored, stored_labels

    def _commit(self, enqueue, key, stored_embeddings, stored_labels, end, filled):
        """Writes the enqueued memory `key` to the variables when `enqueue` (warm, updating)."""
        chosen = ops.logical_and(enqueue, ops.cast(key, "bool"))
        self.memory_embeddings.assign(
            ops.where(chosen[:, None, None], stored_embeddings, self.memory_embeddings.value)
        )
        self.memory_labels.assign(
            ops.where(chosen[:, None], stored_labels, self.memory_labels.value)
        )
        self.write_index.assign(ops.where(chosen, end % self.memory_size, self.write_index.value))
        self.filled.assign(ops.where(chosen, filled, self.filled.value))

    @staticmethod
    def _select(values, key):
        """Row `key` (one-hot) of a `[K, ...]` tensor."""
        shape = (-1,) + (1,) * (len(values.shape) - 1)
        return ops.sum(values * ops.cast(ops.reshape(key, shape), values.dtype), axis=0)

    def _empty_memories(self, emptied, restart_warmup):
        """Empties the memories where the bool array `emptied [K]` is set (their warm-up too
        when `restart_warmup`)."""
        rows = emptied[:, None]
        embeddings = self.memory_embeddings.value
        self.memory_embeddings.assign(ops.where(rows[..., None], 0.0, embeddings))
        self.memory_labels.assign(ops.where(rows, EMPTY_LABEL, self.memory_labels.value))
        counters = (self.write_index, self.filled) + ((self.steps,) if restart_warmup else ())
        for variable in counters:
            variable.assign(ops.where(emptied, 0, variable.value))
