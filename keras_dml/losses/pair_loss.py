"""The skeleton every pair loss shares; a pair loss writes only its formula."""

from keras import ops

from keras_dml.pairs.batch import pair_batch
from keras_dml.pairs.reduction import finish


def pair_loss(
    labels,
    embeddings,
    formula,
    matrix="cosine",
    normalize_embeddings=False,
    pair_mask=None,
    return_count=False,
    regularizer=None,
):
    """A pair loss: `formula(matrix, positives, negatives) -> (loss, count)` on a batch.

    Every pair loss function is one such call, and takes `labels` (int `[B]`), `embeddings`
    (float `[B, D]`), `pair_mask` (bool `[B, B]` or a `ReferenceBlock`, the pairs to use) and
    `return_count`; it returns the float32 loss, or `(loss, count)`, 0.0 when nothing is valid and
    NaN for NaN or Inf embeddings.

    Args:
        formula: callable. The loss on the `[B, B]` (or `[B, M]`) matrix and its two pair masks.
        matrix: a name in `keras_dml.pairs.MATRICES` or a callable `(embeddings,
            references=None) -> [B, B]` (or `[B, M]`).
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.
        regularizer: optional callable `embeddings -> scalar`, added when the count is not 0.

    Examples:
    >>> hinge = lambda d, pos, neg: reduce_pair_losses(ops.where(pos, d, ops.relu(1 - d)), pos, neg)
    >>> loss = pair_loss([0, 0, 1, 1], keras.random.normal((4, 8)), hinge, "euclidean")
    """
    embeddings, values, positives, negatives = pair_batch(
        labels, embeddings, matrix, pair_mask, normalize_embeddings
    )
    loss, count = formula(values, positives, negatives)
    if regularizer is not None:
        loss = loss + ops.where(count > 0, regularizer(embeddings), 0.0)
    return finish(loss, count, return_count, embeddings=embeddings)
