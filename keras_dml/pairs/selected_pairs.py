"""Positive and negative pair masks restricted to a chosen subset of pairs (a miner's output)."""

from keras import ops

from keras_dml.pairs.masks import negative_mask, positive_mask


def selected_pair_masks(labels, pair_mask=None):
    """`(pos_mask, neg_mask)`: the positive and the negative pairs `[B, B]` within `pair_mask`.

    Raises:
        ValueError: when `pair_mask` is not `[B, B]`.

    Examples:
    >>> pos, neg = selected_pair_masks([0, 0, 1], [[False, True, False]] * 3)
    """
    labels = ops.reshape(ops.convert_to_tensor(labels), (-1,))
    pos_mask = positive_mask(labels)
    neg_mask = negative_mask(labels)
    if pair_mask is None:
        return pos_mask, neg_mask
    pair_mask = ops.cast(ops.convert_to_tensor(pair_mask), "bool")
    batch_size = labels.shape[0]
    if len(pair_mask.shape) != 2 or (
        batch_size is not None and tuple(pair_mask.shape) != (batch_size, batch_size)
    ):
        raise ValueError(
            "`pair_mask` must be a [batch_size, batch_size] mask of the pairs to keep; build it "
            f"from the batch's labels. Received: pair_mask.shape={tuple(pair_mask.shape)} for "
            f"{batch_size} labels"
        )
    return ops.logical_and(pos_mask, pair_mask), ops.logical_and(neg_mask, pair_mask)
