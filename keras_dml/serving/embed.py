"""`embed`: run a model over a dataset or an array and collect embeddings and labels."""

import functools
import os

import numpy as np
from tqdm.auto import tqdm

from keras_dml.data.batch_streams import is_batch_stream, iterate_batches, stream_length
from keras_dml.serving.embedder import Embedder
from keras_dml.serving.input_contract import ImageContract


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


def _image_batches(data, batch_size):
    """An `ImageDataset`'s batches from `as_dataset` (no TensorFlow on JAX and PyTorch)."""
    make = getattr(data, "as_dataset", None) or data.as_tf_dataset
    return make(training=False, batch_size=batch_size)


def _stream_batches(stream):
    """Yields `(images, labels or None)` NumPy batches of a `tf.data.Dataset` or a PyDataset."""
    # NumPy batches: the JAX and torch backends' predict functions do not take TF tensors.
    for element in iterate_batches(stream):
        images, labels = _split_element(element)
        yield np.asarray(images), (None if labels is None else np.asarray(labels))


def _batches(data, batch_size):
    """Yields `(images, labels or None)` batches and the number of batches (or None)."""
    if _is_image_dataset(data):
        data = _image_batches(data, batch_size)
    if isinstance(data, tuple) and len(data) == 2 and not is_batch_stream(data[0]):
        images, labels = np.asarray(data[0]), np.asarray(data[1])
        if labels.shape[0] != images.shape[0]:
            raise ValueError(
                f"Got {images.shape[0]} images but {labels.shape[0]} labels in (images, labels)."
            )
    elif is_batch_stream(data):
        return _stream_batches(data), stream_length(data)
    else:
        images, labels = np.asarray(data), None
    if images.ndim < 2:
        raise ValueError(
            f"`embed` needs a batch of inputs [N, ...]. Received shape {images.shape}."
        )
    # An empty array is one empty batch: the model's `[0, D]` answer, as on every path.
    starts = range(0, max(images.shape[0], 1), batch_size)
    return (
        (
            (images[s : s + batch_size], None if labels is None else labels[s : s + batch_size])
            for s in starts
        ),
        len(starts),
    )


def _is_image_dataset(data):
    """Whether `data` builds its own batches (an `ImageDataset`: `as_dataset` / `as_tf_dataset`)."""
    return hasattr(data, "as_dataset") or hasattr(data, "as_tf_dataset")


class _MemmapWriter:
    """Appends float32 rows to a `.npy` file, straight into a memory map when the count is known."""

    def __init__(self, path, total_rows):
        self.path = os.fspath(path)
        if not self.path.endswith(".npy"):
            raise ValueError(f"`out_path` must end with .npy. Received: out_path={self.path!r}")
        self.total_rows = total_rows
        self.rows = 0
        self.array = None
        self.raw = None
        self.dim = None

    def write(self, batch):
        if self.dim is None:
            self.dim = batch.shape[1]
            if self.total_rows is not None:
                self.array = np.lib.format.open_memmap(
                    self.path, mode="w+", dtype=np.float32, shape=(self.total_rows, self.dim)
                )
            else:
                self.raw = open(self.path + ".part", "wb")  # noqa: SIM115 (closed in finish)
        if self.array is not None:
            if self.rows + batch.shape[0] > self.total_rows:
                raise ValueError(
                    f"The data yielded more than the {self.total_rows} rows it announced."
                )
            self.array[self.rows : self.rows + batch.shape[0]] = batch
        else:
            self.raw.write(np.ascontiguousarray(batch, dtype=np.float32).tobytes())
        self.rows += batch.shape[0]

    def finish(self):
        if self.array is not None:
            if self.rows != self.total_rows:
                raise ValueError(
                    f"The data yielded {self.rows} rows but announced {self.total_rows}."
                )
            self.array.flush()
            del self.array
        else:
            self.raw.close()
            out = np.lib.format.open_memmap(
                self.path, mode="w+", dtype=np.float32, shape=(self.rows, self.dim)
            )
            step = max(1, (64 << 20) // (4 * self.dim))
            with open(self.path + ".part", "rb") as raw:
                for start in range(0, self.rows, step):
                    count = min(step, self.rows - start)
                    block = np.frombuffer(raw.read(4 * self.dim * count), np.float32)
                    out[start : start + count] = block.reshape(count, self.dim)
            out.flush()
            del out
            os.remove(self.path + ".part")
        return np.load(self.path, mmap_mode="r")

    def abort(self):
        if self.raw is not None and not self.raw.closed:
            self.raw.close()
        self.array = None
        for path in (self.path + ".part",):
            if os.path.exists(path):
                os.remove(path)


def _known_rows(data):
    """The number of rows `data` will yield when known without iterating, else None."""
    if isinstance(data, tuple) and len(data) == 2 and not is_batch_stream(data[0]):
        return len(data[0])
    if _is_image_dataset(data):
        return len(data)
    if is_batch_stream(data):
        return None
    return len(data)


def _image_shape(model):
    """The `(H, W, C)` a model takes (`model.image_shape`, else its input shape), or None."""
    shape = getattr(model, "image_shape", None)
    if shape is None:
        try:
            shape = tuple(model.input_shape[1:])
        except (AttributeError, ValueError, TypeError):
            return None
    return tuple(shape) if len(shape) == 3 else None


def _predict_function(model):
    """`model.predict_on_batch`, or one compiled forward pass under a multi-replica strategy."""
    predict = getattr(model, "predict_on_batch", None)
    if predict is None:
        return model
    strategy = getattr(model, "distribute_strategy", None)
    if getattr(strategy, "num_replicas_in_sync", 1) == 1:
        return predict
    # predict_on_batch would run the whole batch on every replica (N x replicas rows).
    import tensorflow as tf

    forward = tf.function(lambda images: model(images, training=False), reduce_retracing=True)
    return lambda images: forward(tf.convert_to_tensor(images))


def _empty_embeddings(predict, contract, image_shape):
    """The `[0, D]` answer for data that yielded no batch (an empty dataset)."""
    if image_shape is None or None in image_shape:
        raise ValueError(
            "`embed` received an empty dataset and the model's input size is not fixed, so the "
            "embedding size is unknown; pass at least one image."
        )
    images = np.zeros((0, *image_shape), np.float32)
    output = np.asarray(predict(images if contract is None else contract.check(images)))
    return _rows(output.astype(np.float32))


def _rows(output):
    """`output` as `[N, D]` rows (an empty batch keeps its `D`)."""
    return output.reshape(output.shape[0], int(np.prod(output.shape[1:])))


def embed(model, data, batch_size=256, verbose=True, out_path=None):
    """Computes the embeddings of `data` with `model` (inference mode) and collects the labels.

    Args:
        model: a `keras.Model` (or any callable) mapping a batch to one tensor `[B, D]`.
        data: a batched `tf.data.Dataset` or `keras.utils.PyDataset` of `(images, labels)`,
            images only or dicts; an `ImageDataset`; a tuple `(images, labels)` of arrays; or an
            array of inputs.
        batch_size: int. Batch size for arrays and `ImageDataset`s. Defaults to `256`.
        verbose: bool. Show a tqdm progress bar. Defaults to `True`.
        out_path: str or None. A `.npy` file to stream the embeddings to; the result is then a
            read-only memory map of it. Defaults to `None` (in memory).

    Returns:
        `(embeddings, labels)`: float32 `[N, D]` and `[N]` labels, or `None` without labels.

    Raises:
        InputContractError: a batch of images breaks the input contract.

    Examples:
    >>> import keras
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    >>> emb, labels = embed(model, np.zeros((5, 4), "float32"), batch_size=2, verbose=False)
    >>> emb.shape, labels
    ((5, 2), None)
    """
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive integer. Received: {batch_size!r}")
    contract = ImageContract(_image_shape(model))
    if isinstance(model, Embedder):  # it checks each batch itself, with this call's contract
        predict, contract = functools.partial(model, contract=contract), None
    else:
        predict = _predict_function(model)
    writer = None if out_path is None else _MemmapWriter(out_path, _known_rows(data))
    batches, total = _batches(data, int(batch_size))
    embeddings, labels = [], []
    try:
        for images, batch_labels in tqdm(batches, total=total, disable=not verbose, desc="embed"):
            if contract is not None and np.ndim(images) == 4:
                images = contract.check(images)
            output = predict(images)
            if isinstance(output, (list, tuple, dict)):
                raise ValueError(
                    "`embed` needs a model with ONE output tensor [B, D] (the concatenated "
                    f"embedding). Received a {type(output).__name__} of outputs."
                )
            output = np.asarray(output, dtype=np.float32)
            if writer is None:
                embeddings.append(output)
            else:
                writer.write(_rows(output))
                embeddings.append(None)
            if batch_labels is not None:
                labels.append(np.asarray(batch_labels).reshape(-1))
        if not embeddings:
            embeddings.append(_empty_embeddings(predict, contract, _image_shape(model)))
            if writer is not None:
                writer.write(embeddings.pop())
                embeddings.append(None)
        if labels and len(labels) != len(embeddings):
            raise ValueError("Some dataset elements carry labels and others do not.")
        if writer is not None:
            result = writer.finish()
        else:
            result = np.concatenate(embeddings, axis=0).reshape(-1, embeddings[0].shape[-1])
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return result, (np.concatenate(labels) if labels else None)
