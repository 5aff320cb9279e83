"""The pair loss `CrossBatchMemory` wraps, on the block of batch anchors x memory slots."""

from keras import ops

from keras_dml.miners.base import PairMiner, TripletMiner
from keras_dml.pairs.references import with_pairs


def loss_against_memory(inner_loss, miner, labels, embeddings, block):
    """`(loss, count)` of the wrapped loss, the batch's anchors against the memory `block`.

    A pair miner chooses among the block's pairs, a triplet miner replaces the wrapped loss's own
    and a callable's `bool [B, M]` narrows them.

    Args:
        block: `keras_dml.pairs.ReferenceBlock`. The memory's labels, embeddings and pairs.

    References:
        Wang, Zhang, Huang, Scott, "Cross-Batch Memory for Embedding Learning", CVPR 2020,
        Algorithm 1.
    """
    if isinstance(miner, PairMiner):
        block = with_pairs(block, miner(embeddings, labels, pair_mask=block).pair_mask())
    elif miner is not None and not isinstance(miner, TripletMiner):
        mined = ops.cast(miner(labels, embeddings, block.labels, block.embeddings), "bool")
        block = block._replace(mask=ops.logical_and(block.mask, mined))
    triplet_miner = miner if isinstance(miner, TripletMiner) else None
    loss, count = inner_loss.compute(
        labels, embeddings, return_count=True, pair_mask=block, miner=triplet_miner
    )
    return ops.cast(loss, "float32"), ops.cast(count, "int32")
