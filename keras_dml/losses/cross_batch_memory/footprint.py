"""What the loss against a cross-batch memory needs in memory, checked before training."""

import os

from keras_dml.losses.cross_batch_memory.arguments import memory_miner, wrappable_loss
from keras_dml.miners.base import TripletMiner

# Bytes per (anchor, memory slot) element of the largest block the memory loss builds: its
# float32 distances, pair masks, loss terms and their gradients, alive at once in a training step.
# `python -m benchmarks.scale_out.memory_loss` measured +430 MiB (TensorFlow) and +254 MiB (JAX)
# over the plain loss for a 128 x 60,000 block with 128-d slots: under 59 bytes per element with
# the slots counted in; 64 bounds both (benchmarks/results/scale_out_memory_loss.json).
BYTES_PER_ELEMENT = 64
# The memory loss's own compiled step (XLA / tf.function buffers), whatever the memory's size.
STEP_OVERHEAD_BYTES = 64 * 2**20


def memory_loss_bound(batch_size, memory_size, embedding_dim, num_memories=1):
    """Bytes a training step with a pair-loss memory needs over the plain loss: the `[B, M]`
    block, the slots (`float32` embeddings and `int32` labels) and `STEP_OVERHEAD_BYTES`.

    Examples:
    >>> round(memory_loss_bound(128, 60_000, 128) / 2**20)
    562
    """
    slots = 4 * memory_size * (embedding_dim + 1) * num_memories
    return BYTES_PER_ELEMENT * batch_size * memory_size + slots + STEP_OVERHEAD_BYTES


def memory_block_shape(inner_loss, miner, batch_size, memory_size):
    """The largest block the memory loss builds: `(B, M)`, or `(B, M, M)` when a triplet miner
    scores every (anchor, positive, negative) of the memory.

    Args:
        inner_loss: the wrapped `MetricLoss`.
        miner: the memory's miner (`CrossBatchMemory.miner`), or `None`.
        batch_size: int. Samples per batch (per replica).
        memory_size: int. Memory slots `M`.
    """
    triplets = miner if isinstance(miner, TripletMiner) else getattr(inner_loss, "miner", None)
    if isinstance(triplets, TripletMiner) and triplets.scores_every_triplet:
        return (batch_size, memory_size, memory_size)
    return (batch_size, memory_size)


def available_memory_bytes():
    """Free physical memory of this host (`os.sysconf`), or `None` where it cannot be read."""
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory_fits(inner_loss, miner, batch_size, memory_size, available=None):
    """Refuses, in one line, a memory whose loss block cannot fit in `available` bytes.

    Args:
        inner_loss: the wrapped `MetricLoss`.
        miner: the memory's miner, or `None`.
        batch_size: int. Samples per batch (per replica).
        memory_size: int. Memory slots `M`.
        available: int or `None`. Bytes it may take; `None`: the host's free memory.

    Raises:
        ValueError: when the block's estimate exceeds `available`.
    """
    available = available_memory_bytes() if available is None else available
    shape = memory_block_shape(inner_loss, miner, batch_size, memory_size)
    needed = BYTES_PER_ELEMENT
    for size in shape:
        needed *= size
    if available is None or needed <= available:
        return
    largest = _largest_memory(len(shape), batch_size, available)
    fix = (
        "a pair loss (contrastive, multi_similarity) or batch-hard / distance-weighted mining, "
        f"or memory_size <= {largest}"
        if len(shape) == 3
        else f"memory_size <= {largest} or a smaller batch"
    )
    raise ValueError(
        f"The cross-batch memory's loss builds a {list(shape)} block (about "
        f"{needed / 2**30:,.1f} GiB) and {available / 2**30:,.1f} GiB is free: use {fix}."
    )


def check_memory_entry(entry, batch_size, available=None):
    """`check_memory_fits` for a run configuration's `{"name": "cross_batch_memory", ...}` entry.

    Args:
        entry: dict. The `loss` entry, with its `loss`, `memory_size` and optional `miner`.
        batch_size: int. The (global) batch size.
        available: int or `None`. Bytes it may take; `None`: the host's free memory.
    """
    inner_loss = wrappable_loss(entry["loss"])
    miner = memory_miner(entry.get("miner"), inner_loss)
    check_memory_fits(inner_loss, miner, batch_size, int(entry["memory_size"]), available)


def _largest_memory(rank, batch_size, available):
    per_anchor = available / (BYTES_PER_ELEMENT * batch_size)
    return int(per_anchor ** (1.0 / (rank - 1)))
