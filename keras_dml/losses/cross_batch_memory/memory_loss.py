"""The pair loss `CrossBatchMemory` wraps, computed on `[batch; memory]` with batch anchors."""

from keras import ops

from keras_dml.losses.cross_batch_memory.pair_mask import memory_pair_mask
from keras_dml.miners.base import PairMiner, TripletMiner


def loss_against_memory(
    inner_loss, miner, labels, embeddings, ref_labels, references, filled, positions, memory_size
):
    """`(loss, count)` of the wrapped loss on `[batch; memory]`, batch anchors against filled slots.

    A pair miner chooses among those pairs, a triplet miner replaces the wrapped loss's own and a
    callable's `bool [B, M]` is combined with them.

    References:
        Wang, Zhang, Huang, Scott, "Cross-Batch Memory for Embedding Learning", CVPR 2020,
        Algorithm 1.
    """
    batch_size = ops.shape(labels)[0]
    pair_mask = memory_pair_mask(batch_size, memory_size, filled, positions)
    all_labels = ops.concatenate([labels, ref_labels], axis=0)
    all_embeddings = ops.concatenate([embeddings, references], axis=0)
    if isinstance(miner, PairMiner):
        pair_mask = miner(all_embeddings, all_labels, pair_mask=pair_mask).pair_mask()
    elif miner is not None and not isinstance(miner, TripletMiner):
        mined = ops.cast(miner(labels, embeddings, ref_labels, references), "bool")
        top = ops.concatenate([ops.zeros((batch_size, batch_size), "bool"), mined], axis=1)
        bottom = ops.zeros((memory_size, batch_size + memory_size), "bool")
        pair_mask = ops.logical_and(pair_mask, ops.concatenate([top, bottom], axis=0))
    triplet_miner = miner if isinstance(miner, TripletMiner) else None
    loss, count = inner_loss.compute(
        all_labels, all_embeddings, return_count=True, pair_mask=pair_mask, miner=triplet_miner
    )
    return ops.cast(loss, "float32"), ops.cast(count, "int32")
