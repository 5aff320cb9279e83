"""A batch as pair losses and miners see it: its `[B, B]` matrix and its pair masks."""

from keras import ops

from keras_dml.pairs.distances import (
    cosine_similarity_matrix,
    inner_products,
    l2_normalize,
    pairwise_distances,
    pairwise_squared_distances,
    prepare_inputs,
)
from keras_dml.pairs.references import (
    ReferenceBlock,
    reference_embeddings,
    reference_pair_masks,
)
from keras_dml.pairs.selected_pairs import selected_pair_masks

MATRICES = {
    "cosine": cosine_similarity_matrix,
    "euclidean": pairwise_distances,
    "squared_euclidean": pairwise_squared_distances,
    "inner_product": inner_products,
}


def pair_batch(labels, embeddings, matrix="cosine", pair_mask=None, normalize_embeddings=False):
    """`(embeddings, matrix, positives, negatives)`: float32 `[B, D]`, `[B, B]`; bool `[B, B]`.

    With a `ReferenceBlock` as `pair_mask`, the matrix and masks are `[B, M]` (anchors against its
    references) and the embeddings `[B + M, D]`, the batch's then the references'.

    Args:
        labels: int tensor with `B` elements.
        embeddings: float tensor `[B, D]`.
        matrix: a name in `MATRICES` or a callable `(embeddings, references=None) -> [B, B]` (or
            `[B, M]`). Defaults to `"cosine"`.
        pair_mask: optional bool tensor `[B, B]`, or a `ReferenceBlock`: the pairs to keep.
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    if normalize_embeddings:
        embeddings = l2_normalize(embeddings)
    matrix = MATRICES[matrix] if isinstance(matrix, str) else matrix
    if isinstance(pair_mask, ReferenceBlock):
        references = reference_embeddings(pair_mask, normalize_embeddings)
        positives, negatives = reference_pair_masks(labels, pair_mask)
        values = matrix(embeddings, references=references)
        return ops.concatenate([embeddings, references], axis=0), values, positives, negatives
    positives, negatives = selected_pair_masks(labels, pair_mask)
    return embeddings, matrix(embeddings), positives, negatives
