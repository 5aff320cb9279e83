"""Pairwise distance and similarity matrices in float32, with finite gradients everywhere."""

import numpy as np
from keras import ops

_SQRT_EPSILON = 1e-12
_NORM_EPSILON = 1e-12


def prepare_inputs(labels, embeddings):
    """Labels as an int32 vector `[B]` and embeddings as a float32 matrix `[B, D]`.

    Raises:
        ValueError: if the embeddings are not 2-D or the batch sizes differ.

    Examples:
    >>> labels, embeddings = prepare_inputs([[0], [1]], [[1.0, 0.0], [0.0, 1.0]])
    """
    embeddings = ops.cast(ops.convert_to_tensor(embeddings), "float32")
    if len(embeddings.shape) != 2:
        raise ValueError(
            "Metric losses expect `embeddings` of shape [batch_size, embedding_dim]. "
            f"Received: embeddings.shape={tuple(embeddings.shape)}"
        )
    labels = ops.convert_to_tensor(labels)
    labels = ops.cast(ops.reshape(labels, (-1,)), "int32")
    n_labels, n_embeddings = labels.shape[0], embeddings.shape[0]
    if n_labels is not None and n_embeddings is not None and n_labels != n_embeddings:
        raise ValueError(
            "`labels` and `embeddings` must describe the same batch: one label per embedding. "
            f"Received: {n_labels} labels and embeddings.shape={tuple(embeddings.shape)}"
        )
    return labels, embeddings


def safe_sqrt(x, epsilon=_SQRT_EPSILON):
    """Square root that is exactly 0, with a zero gradient, at or below `epsilon`."""
    positive = ops.greater(x, epsilon)
    safe_x = ops.where(positive, x, ops.ones_like(x))
    return ops.where(positive, ops.sqrt(safe_x), ops.zeros_like(x))


def l2_normalize(embeddings, epsilon=_NORM_EPSILON):
    """Rows of `[B, D]` scaled to unit norm in float32; an all-zero row stays zero.

    The library's one normalisation: a NumPy array is normalised in NumPy on the host (and stays
    a NumPy array), anything else with `keras.ops`.
    """
    if isinstance(embeddings, np.ndarray):
        embeddings = embeddings.astype(np.float32, copy=False)
        squared_norm = np.sum(np.square(embeddings), axis=-1, keepdims=True)
        return embeddings / np.sqrt(np.maximum(squared_norm, epsilon))
    embeddings = ops.cast(embeddings, "float32")
    squared_norm = ops.sum(ops.square(embeddings), axis=-1, keepdims=True)
    return embeddings / ops.sqrt(ops.maximum(squared_norm, epsilon))


def one_hot_in_range(labels, num_classes):
    """float32 one-hot rows `[B, num_classes]`; a label outside the range gives a zero row."""
    # `ops.one_hot` raises on PyTorch for such a label and gives zeros on TensorFlow.
    labels = ops.cast(ops.reshape(labels, (-1, 1)), "int32")
    return ops.cast(ops.equal(labels, ops.arange(num_classes, dtype="int32")[None, :]), "float32")


def diagonal_mask(batch_size):
    """Boolean `[B, B]` identity mask (`batch_size` may be a tensor)."""
    index = ops.arange(batch_size)
    return ops.equal(ops.expand_dims(index, 1), ops.expand_dims(index, 0))


def pairwise_squared_distances(embeddings, references=None):
    """Squared Euclidean distances `[B, B]` between the rows of `[B, D]`, 0 on the diagonal, or
    `[B, M]` from them to the rows of `references [M, D]`."""
    embeddings = ops.cast(embeddings, "float32")
    others = embeddings if references is None else ops.cast(references, "float32")
    squared_norms = ops.sum(ops.square(embeddings), axis=1)
    other_norms = squared_norms if references is None else ops.sum(ops.square(others), axis=1)
    dot = ops.matmul(embeddings, ops.transpose(others))
    distances = ops.expand_dims(squared_norms, 1) - 2.0 * dot + ops.expand_dims(other_norms, 0)
    distances = ops.maximum(distances, 0.0)  # round-off
    if references is not None:
        return distances
    off_diagonal = ops.logical_not(diagonal_mask(ops.shape(embeddings)[0]))
    return distances * ops.cast(off_diagonal, "float32")


def pairwise_distances(embeddings, squared=False, references=None):
    """Euclidean (`squared=True`: squared) distances `[B, B]` (or `[B, M]` to `references`),
    finite gradients at 0."""
    squared_distances = pairwise_squared_distances(embeddings, references)
    if squared:
        return squared_distances
    return safe_sqrt(squared_distances)


def cosine_similarity_matrix(embeddings, references=None):
    """Cosine similarities `[B, B]` between the rows of `[B, D]` (or `[B, M]` to `references`).

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Eq. (1).
    """
    normalized = l2_normalize(embeddings)
    others = normalized if references is None else l2_normalize(references)
    return ops.matmul(normalized, ops.transpose(others))


def inner_products(embeddings, references=None):
    """Raw inner products `[B, B]` between the rows of `[B, D]` (or `[B, M]` to `references`)."""
    embeddings = ops.cast(embeddings, "float32")
    others = embeddings if references is None else ops.cast(references, "float32")
    return ops.matmul(embeddings, ops.transpose(others))
