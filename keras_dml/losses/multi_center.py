"""Shared parts of the class losses with `K` vectors per class (rows `c*K .. c*K + K - 1`)."""

import numbers

from keras import ops

from keras_dml.losses.class_weights import check_label_range, cosine_logits, prepare_class_inputs
from keras_dml.pairs.distances import prepare_inputs


def check_centers_per_class(centers_per_class, class_vectors=None, name="num_sub_centers"):
    """`centers_per_class` as an int >= 1 that divides the rows of `class_vectors`."""
    if (
        isinstance(centers_per_class, bool)
        or not isinstance(centers_per_class, numbers.Real)
        or int(centers_per_class) != centers_per_class
        or centers_per_class < 1
    ):
        raise ValueError(f"`{name}` must be an integer >= 1. Received: {name}={centers_per_class}")
    centers_per_class = int(centers_per_class)
    if class_vectors is not None and class_vectors.shape[0] % centers_per_class:
        raise ValueError(
            f"The class vectors must have num_classes * {name} rows (class c's are rows "
            f"c*K .. c*K+K-1); pass {name} matching them. Received: "
            f"shape={tuple(class_vectors.shape)}, {name}={centers_per_class}"
        )
    return centers_per_class


def prepare_multi_center_inputs(labels, embeddings, centers, centers_per_class, names):
    """`prepare_class_inputs` for `[C * K, D]` class vectors and labels in `[0, C)`.

    Returns:
        Tuple `(labels, embeddings, centers, centers_per_class, num_classes, invalid)`.
    """
    weights_name, k_name = names
    labels, embeddings = prepare_inputs(labels, embeddings)
    centers = ops.cast(ops.convert_to_tensor(centers), "float32")
    if len(centers.shape) == 2 and centers.shape[0] is not None:
        centers_per_class = check_centers_per_class(centers_per_class, centers, k_name)
        # Before `prepare_class_inputs`, whose range would be the C * K rows, not the C classes.
        check_label_range(labels, centers.shape[0] // centers_per_class)
    labels, embeddings, centers, _ = prepare_class_inputs(labels, embeddings, centers, weights_name)
    num_classes = centers.shape[0] // centers_per_class
    invalid = check_label_range(labels, num_classes)
    return labels, embeddings, centers, centers_per_class, num_classes, invalid


def center_cosines(embeddings, centers, centers_per_class):
    """Cosines `[B, C, K]` between the embeddings `[B, D]` and the `K` centers of each class."""
    num_classes = centers.shape[0] // centers_per_class
    cosine = cosine_logits(embeddings, centers)
    return ops.reshape(cosine, (-1, num_classes, centers_per_class))
