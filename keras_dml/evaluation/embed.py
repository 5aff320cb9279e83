"""`embed`: run a model over a dataset or an array and collect embeddings and labels."""

import numpy as np
from tqdm.auto import tqdm


def _split_element(element):
    """(images, labels or None) from a dataset element: a tensor, a tuple/list or a dict."""
    if isinstance(element, dict):
        images = element.get("images", element.get("image"))
        if images is None:
            raise ValueError(
                "A dict dataset element needs an 'images' (or 'image') key. "
                f"Received keys: {sorted(element)}"
            )
        return images, element.get("labels", element.get("label"))
    if isinstance(element, (tuple, list)):
        return element[0], (element[1] if len(element) > 1 else None)
    return element, None


def _batches(data, batch_size):
    """Yields `(images, labels or None)` batches and the number of batches (or None)."""
    if hasattr(data, "as_tf_dataset"):
        data = data.as_tf_dataset(training=False, batch_size=batch_size)
    if isinstance(data, tuple) and len(data) == 2 and not hasattr(data[0], "element_spec"):
        images, labels = np.asarray(data[0]), np.asarray(data[1])
        if labels.shape[0] != images.shape[0]:
            raise ValueError(
                f"Got {images.shape[0]} images but {labels.shape[0]} labels in (images, labels)."
            )
    elif hasattr(data, "element_spec"):
        cardinality = int(data.cardinality())
        total = cardinality if cardinality >= 0 else None

        def generate():
            for element in data:
                images, labels = _split_element(element)
                yield images, (None if labels is None else np.asarray(labels))

        return generate(), total
    else:
        images, labels = np.asarray(data), None
    if images.ndim < 2:
        raise ValueError(
            f"`embed` needs a batch of inputs [N, ...]. Received shape {images.shape}."
        )
    starts = range(0, images.shape[0], batch_size)
    return (
        (
            (images[s : s + batch_size], None if labels is None else labels[s : s + batch_size])
            for s in starts
        ),
        len(starts),
    )


def embed(model, data, batch_size=256, verbose=True):
    """Computes the embeddings of `data` with `model` (inference mode) and collects the labels.

    Args:
        model: a `keras.Model` (or any callable) mapping a batch of inputs to one tensor [B, D].
        data: a `tf.data.Dataset` of batched `(images, labels)` (or images only, or dicts with
            `images`/`labels` keys), an object with `as_tf_dataset(training, batch_size)` (an
            `ImageDataset`), a tuple `(images, labels)` of arrays, or an array of inputs.
        batch_size: int. Batch size for arrays and `ImageDataset`s; a `tf.data.Dataset` keeps its
            own batching. Defaults to `256`.
        verbose: bool. Show a tqdm progress bar. Defaults to `True`.

    Returns:
        `(embeddings, labels)`: float32 array [N, D] and an array [N] of labels, or `None` when the
        data carries no labels.

    Examples:
    >>> import keras
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    >>> emb, labels = embed(model, np.zeros((5, 4), "float32"), batch_size=2, verbose=False)
    >>> emb.shape, labels
    ((5, 2), None)
    """
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive integer. Received: {batch_size!r}")
    predict = getattr(model, "predict_on_batch", None) or model
    batches, total = _batches(data, int(batch_size))
    embeddings, labels = [], []
    for images, batch_labels in tqdm(batches, total=total, disable=not verbose, desc="embed"):
        output = predict(images)
        if isinstance(output, (list, tuple, dict)):
            raise ValueError(
                "`embed` needs a model with ONE output tensor [B, D] (the concatenated embedding). "
                f"Received a {type(output).__name__} of outputs."
            )
        embeddings.append(np.asarray(output, dtype=np.float32))
        if batch_labels is not None:
            labels.append(np.asarray(batch_labels).reshape(-1))
    if not embeddings:
        raise ValueError("`embed` received no data: the dataset or array is empty.")
    if labels and len(labels) != len(embeddings):
        raise ValueError("Some dataset elements carry labels and others do not.")
    embeddings = np.concatenate(embeddings, axis=0).reshape(-1, embeddings[0].shape[-1])
    return embeddings, (np.concatenate(labels) if labels else None)
