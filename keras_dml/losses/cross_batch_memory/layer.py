"""`CrossBatchMemory` (XBM, Wang et al. 2020): a pair loss between the batch and a FIFO memory."""

import keras
import numpy as np
from keras import ops

from keras_dml.losses.cross_batch_memory.arguments import (
    memory_miner,
    positive_int,
    wrappable_loss,
)
from keras_dml.losses.cross_batch_memory.memory_loss import loss_against_memory
from keras_dml.losses.cross_batch_memory.memory_queue import MemoryQueue
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.reduction import propagate_nonfinite
from keras_dml.utils.argument_config import ArgumentConfig


@register_loss("cross_batch_memory")
@keras.saving.register_keras_serializable(package="keras_dml")
class CrossBatchMemory(MemoryQueue, ArgumentConfig, keras.layers.Layer):
    """Cross-batch memory: a pair loss between the current batch and the last `M` embeddings.

    Each call first enqueues the batch's embeddings (without gradient) and labels into a FIFO
    memory of `memory_size` slots (a circular queue: the oldest slots are overwritten), then
    computes the wrapped pair loss with the batch as anchors and the filled memory, which now
    holds the batch too, as references; the pair of a sample with its own copy in the memory is
    left out. Only the batch's embeddings carry gradients (Algorithm 1).

    How the loss sees the memory: the wrapped loss runs on `[batch; memory]` with a `pair_mask`
    that keeps only (batch anchor, filled memory slot) pairs, so any keras-dml pair loss that
    takes `pair_mask` works unchanged (contrastive, triplet, margin, multi-similarity, binomial
    deviance, NT-Xent, SupCon, circle, lifted structure, tuplet margin, SNR contrastive, FastAP;
    their mining and sampling pick among the allowed pairs). N-pairs, whose tuples are built from
    the batch alone, and class-based losses (proxies) are refused. Lifted structure, whose
    positive pair `(i, j)` also uses the negatives of `j`, sees only the anchor's: `j` is a
    memory slot, and XBM never computes memory-to-memory similarities.

    Memories: the layer holds `num_memories` independent memories, chosen per call with
    `memory` (an int or an int tensor). Ensembles call their loss once per learner slice: each
    call site passes its own key so that no memory mixes the features of different learners
    (each model's `loss_memory_keys` says how many it uses and which is which; D&C: 0 the whole
    embedding, `1 + k` learner k, whose memory then holds only its own cluster's batches).
    Slices narrower than `embedding_dim` are padded with zeros in the memory, which changes no
    distance and no inner product.

    Cost: the wrapped loss sees a `[B + M, B + M]` pair matrix (the mask route keeps every pair
    loss unchanged), so time and memory grow with `(B + M)^2`: fine for memories of a few
    thousand slots, not for the paper's largest (the whole training set).

    Warm-up: for the first `warmup_steps` calls on a memory the loss is the plain batch loss and
    nothing is enqueued. The paper starts XBM after a warm-up because early features drift fast;
    features enqueued then would be compared for the next `M / B` steps although they no longer
    describe the network, so the memory starts empty when it starts being used.

    Under `tf.distribute` the owning model passes the global batch (`gather_replicas`, in
    replica order), so every replica enqueues the same rows and holds the same memory; the
    memory variables take replica 0's value (`aggregation="only_first_replica"`). Under JAX
    data parallelism the global batch is one array. The memory is part of the model's weights,
    so `.keras` files and `BackupAndRestore` carry it and a resumed run continues with it.

    Args:
        loss: the pair loss to wrap: a registered name, a `{"name": ...}` dict or a
            `keras_dml.losses.MetricLoss` instance whose function takes `pair_mask`.
        memory_size: int. Number of slots `M` (the paper uses up to the dataset size). Must be
            at least the (global) batch size.
        embedding_dim: int. Width of the stored embeddings: the model's embedding dimension
            (filled in by the run configuration like a class loss's).
        num_memories: int. Independent memories (one per call site). Defaults to `1`.
        warmup_steps: int. Calls per memory before it is used and filled. Defaults to `0`.
        miner: optional miner of the (batch anchor, memory slot) pairs, as
            pytorch-metric-learning's `CrossBatchMemory` mines with `ref_emb`: a pair miner
            (`keras_dml.miners.PairMiner`, a registered name or a `{"name": ...}` dict) chooses
            among the pairs the memory mask keeps, and the loss is computed on the chosen
            ones; a triplet miner takes the place of the wrapped triplet or margin loss's own
            miner on `[batch; memory]`; a callable `(labels, embeddings, ref_labels,
            ref_embeddings) -> bool [B, M]` is combined with the memory mask (a registered
            function serialises with the layer). Defaults to `None`.
        name: str. Defaults to `"cross_batch_memory"`.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        labels: int tensor `[B]`.
        embeddings: float tensor `[B, d]`, `d <= embedding_dim`.
        return_count: bool. Also return the int32 number of pairs used. Defaults to `False`.
        memory: int or int scalar tensor in `[0, num_memories)`. Defaults to `0`.
        update: bool or bool scalar tensor. Whether this call counts as a step of the memory
            (enqueues, advances the warm-up). A model that evaluates two losses and keeps one
            (D&C selects its learner or full loss with `where`: a `cond` branch cannot update
            variables under `MirroredStrategy` nor JAX) passes False for the one it discards.
            Defaults to `True`.

    Returns:
        float32 scalar loss, or `(loss, num_valid)`.

    Examples:
    >>> xbm = CrossBatchMemory({"name": "contrastive"}, memory_size=256, embedding_dim=64)
    >>> model.compile(optimizer="adam", loss=xbm)  # doctest: +SKIP

    References:
        Wang, Zhang, Huang, Scott, "Cross-Batch Memory for Embedding Learning", CVPR 2020,
        Algorithm 1 (enqueue the batch, then the pair loss of the batch against the memory)
        and its warm-up. pytorch-metric-learning's `CrossBatchMemory` is the value reference.
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
        self.built = True  # the state is complete; nothing depends on the input shape

    def call(self, labels, embeddings, return_count=False, memory=0, update=True):
        labels = ops.cast(ops.reshape(labels, (-1,)), "int32")
        embeddings = self._padded(ops.cast(embeddings, "float32"))
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
        memory_loss, memory_count = loss_against_memory(
            self.inner_loss,
            self.miner,
            labels,
            embeddings,
            reference_labels,
            references,
            filled,
            positions,
            self.memory_size,
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
        """Empties memories, e.g. between training stages or after a division re-assigns the
        learners' clusters.

        Args:
            keys: iterable of int memory keys (call sites) to empty, or `None` for every memory.
                Defaults to `None`.
            restart_warmup: bool. Also restart the emptied memories' warm-up (`warmup_steps`).
                Defaults to `True`.
        """
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
