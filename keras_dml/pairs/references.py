"""A pair mask in block form: the batch's anchors against `M` reference samples, `[B, M]`."""

import collections

from keras import ops

from keras_dml.pairs.distances import l2_normalize, prepare_inputs


class ReferenceBlock(collections.namedtuple("ReferenceBlock", ["labels", "embeddings", "mask"])):
    """`pair_mask` as a block: reference `labels [M]`, `embeddings [M, D]` and the pairs `mask`
    (bool `[B, M]`) of each anchor with them; the references are never anchors.

    Examples:
    >>> block = ReferenceBlock([0, 1, 1], np.eye(3, 4), np.ones((2, 3), bool))
    """


def reference_pair_masks(labels, block):
    """`(pos_mask, neg_mask)`: bool `[B, M]`, the anchors' pairs with the references in `block`.

    Raises:
        ValueError: when `block.mask` is not `[B, M]`.
    """
    ref_labels = ops.cast(ops.reshape(ops.convert_to_tensor(block.labels), (-1,)), "int32")
    mask = ops.cast(ops.convert_to_tensor(block.mask), "bool")
    expected = (labels.shape[0], ref_labels.shape[0])
    if len(mask.shape) != 2 or any(
        size is not None and got is not None and size != got
        for size, got in zip(expected, mask.shape)
    ):
        raise ValueError(
            "A ReferenceBlock's `mask` must be [batch_size, num_references]. Received: "
            f"mask.shape={tuple(mask.shape)} for {expected[0]} anchors and {expected[1]} references"
        )
    same = ops.equal(ops.expand_dims(labels, 1), ops.expand_dims(ref_labels, 0))
    return ops.logical_and(same, mask), ops.logical_and(ops.logical_not(same), mask)


def reference_embeddings(block, normalize):
    """The references of `block` as float32 `[M, D]`, L2-normalised when `normalize`."""
    _, references = prepare_inputs(block.labels, block.embeddings)
    return l2_normalize(references) if normalize else references


def with_pairs(pair_mask, pairs):
    """`pairs` (bool, e.g. a miner's choice) in the form of `pair_mask`: itself, or `pair_mask`'s
    `ReferenceBlock` with `pairs` as its mask."""
    if isinstance(pair_mask, ReferenceBlock):
        return pair_mask._replace(mask=pairs)
    return pairs
