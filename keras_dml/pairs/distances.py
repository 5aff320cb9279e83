"""Pairwise distance and similarity matrices shared by every in-batch metric loss.

Everything here runs in float32 and is safe to differentiate: the Euclidean distance uses a
square root whose gradient is zero (not NaN) where the distance is zero, e.g. on the diagonal or
for duplicate embeddings.
"""

from keras import ops

_SQRT_EPSILON = 1e-12
_NORM_EPSILON = 1e-12


def prepare_inputs(labels, embeddings):
    """Standardises `(labels, embeddings)` for the in-batch losses.

    Labels of any shape with `B` elements (e.g. `[B]` or `[B, 1]`, integer or float, as Keras'
    `Loss.__call__` converts `y_true` to float) become an int32 vector `[B]`; embeddings become a
    float32 matrix `[B, D]`, so float16 inputs under mixed precision are computed in float32.

    Args:
        labels: tensor. Integer class ids, `B` elements.
        embeddings: tensor. Embeddings, shape `[B, D]`.

    Returns:
        Tuple `(labels, embeddings)`: int32 `[B]` and float32 `[B, D]`.

    Raises:
        ValueError: if the embeddings are not 2-D or the static batch sizes differ.

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
    """Square root with a finite gradient everywhere.

    Entries `<= epsilon` return exactly 0 with a zero gradient instead of the infinite (NaN after
    the chain rule) gradient of `sqrt` at 0.

    Args:
        x: tensor. Non-negative values.
        epsilon: float. Values at or below it are treated as 0. Defaults to `1e-12`.

    Returns:
        Tensor of the same shape as `x`.
    """
    positive = ops.greater(x, epsilon)
    safe_x = ops.where(positive, x, ops.ones_like(x))
    return ops.where(positive, ops.sqrt(safe_x), ops.zeros_like(x))


def l2_normalize(embeddings, epsilon=_NORM_EPSILON):
    """L2-normalises rows in float32; an all-zero row stays zero (finite gradient).

    The one normalisation of the library: models normalise their learner embeddings with it
    and losses their inputs, so both see the same numbers (safe under mixed precision).

    Args:
        embeddings: tensor `[B, D]`.
        epsilon: float. Lower bound on the squared norm. Defaults to `1e-12`.

    Returns:
        float32 tensor `[B, D]` with unit-norm rows.
    """
    embeddings = ops.cast(embeddings, "float32")
    squared_norm = ops.sum(ops.square(embeddings), axis=-1, keepdims=True)
    return embeddings / ops.sqrt(ops.maximum(squared_norm, epsilon))


def one_hot_in_range(labels, num_classes):
    """`[B, num_classes]` float32 one-hot rows; a label outside `[0, num_classes)` gives a row
    of zeros on every backend (`ops.one_hot` raises on PyTorch and gives zeros on TensorFlow).

    Examples:
    >>> ops.convert_to_numpy(one_hot_in_range([1, 5], 3)).tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """
    labels = ops.cast(ops.reshape(labels, (-1, 1)), "int32")
    return ops.cast(ops.equal(labels, ops.arange(num_classes, dtype="int32")[None, :]), "float32")


def diagonal_mask(batch_size):
    """Boolean `[B, B]` identity mask, built from `arange` so `batch_size` may be a tensor."""
    index = ops.arange(batch_size)
    return ops.equal(ops.expand_dims(index, 1), ops.expand_dims(index, 0))


def pairwise_squared_distances(embeddings):
    """Squared Euclidean distances between all rows, `||x_i - x_j||^2`.

    Computed as `|x_i|^2 - 2 x_i.x_j + |x_j|^2`, clipped at 0 against round-off, with an exact 0
    diagonal.

    Args:
        embeddings: tensor `[B, D]`.

    Returns:
        float32 tensor `[B, B]`.

    Examples:
    >>> pairwise_squared_distances([[0.0, 0.0], [3.0, 4.0]])  # [[0, 25], [25, 0]]
    """
    embeddings = ops.cast(embeddings, "float32")
    squared_norms = ops.sum(ops.square(embeddings), axis=1)
    dot = ops.matmul(embeddings, ops.transpose(embeddings))
    distances = ops.expand_dims(squared_norms, 1) - 2.0 * dot + ops.expand_dims(squared_norms, 0)
    distances = ops.maximum(distances, 0.0)
    off_diagonal = ops.logical_not(diagonal_mask(ops.shape(embeddings)[0]))
    return distances * ops.cast(off_diagonal, "float32")


def pairwise_distances(embeddings, squared=False):
    """Euclidean (or squared Euclidean) distances between all rows.

    Args:
        embeddings: tensor `[B, D]`.
        squared: bool. Return squared distances. Defaults to `False`.

    Returns:
        float32 tensor `[B, B]`; the gradient is finite where distances are 0.

    Examples:
    >>> pairwise_distances([[0.0, 0.0], [3.0, 4.0]])  # [[0, 5], [5, 0]]
    """
    squared_distances = pairwise_squared_distances(embeddings)
    if squared:
        return squared_distances
    return safe_sqrt(squared_distances)


def cosine_similarity_matrix(embeddings):
    """Cosine similarities between all rows, `s_ij = x_i.x_j / (|x_i| |x_j|)`.

    Args:
        embeddings: tensor `[B, D]`.

    Returns:
        float32 tensor `[B, B]` with values in `[-1, 1]`.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2018, Eq. (1).
    """
    normalized = l2_normalize(embeddings)
    return ops.matmul(normalized, ops.transpose(normalized))
