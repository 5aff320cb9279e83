"""Batched datasets (`tf.data.Dataset`, `keras.utils.PyDataset`) recognised without importing
TensorFlow or Keras.

Functions that accept "arrays or a batched dataset" (embedding, search galleries, BIER's
initialisation, DCML's diagnostics, the division passes) ask `is_batch_stream` instead of
`isinstance(x, tf.data.Dataset)`, so they import where TensorFlow is absent, and `keras-dml
search` / `evaluate` refuse a bad argument before Keras loads. A dataset of either kind exists
only once its module is imported, so `sys.modules` answers without importing either.
"""

import sys


def _loaded_pydataset_class():
    keras = sys.modules.get("keras")
    return None if keras is None else keras.utils.PyDataset


def is_tf_dataset(value):
    """Whether `value` is a `tf.data.Dataset`, without importing TensorFlow.

    Examples:
    >>> is_tf_dataset([1, 2])
    False
    """
    tensorflow = sys.modules.get("tensorflow")
    return tensorflow is not None and isinstance(value, tensorflow.data.Dataset)


def is_py_dataset(value):
    """Whether `value` is a `keras.utils.PyDataset`, without importing Keras.

    Examples:
    >>> is_py_dataset([1, 2])
    False
    """
    pydataset = _loaded_pydataset_class()
    return pydataset is not None and isinstance(value, pydataset)


def is_batch_stream(value):
    """Whether `value` yields batches: a `tf.data.Dataset` or a `keras.utils.PyDataset`.

    Args:
        value: any object.

    Returns:
        bool.

    Examples:
    >>> is_batch_stream((1, 2))
    False
    """
    return is_tf_dataset(value) or is_py_dataset(value)


def iterate_batches(stream):
    """The batches of one pass over a `tf.data.Dataset` or a `keras.utils.PyDataset`, in order.

    A PyDataset is indexed `0 .. len(stream) - 1` (its `__len__` is the batches of an epoch).

    Args:
        stream: a `tf.data.Dataset` or a `keras.utils.PyDataset`.

    Yields:
        Each batch as the stream gives it.
    """
    if is_py_dataset(stream):
        for step in range(len(stream)):
            yield stream[step]
    else:
        yield from stream


def stream_length(stream):
    """Batches in one pass of `stream` when known without iterating, else `None`.

    Args:
        stream: a `tf.data.Dataset` or a `keras.utils.PyDataset`.

    Returns:
        int or `None` (a `tf.data.Dataset` of unknown or infinite cardinality).
    """
    if is_py_dataset(stream):
        return len(stream)
    cardinality = int(stream.cardinality())
    return cardinality if cardinality >= 0 else None
