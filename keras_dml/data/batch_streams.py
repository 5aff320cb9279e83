"""Batched datasets (`tf.data.Dataset`, `keras.utils.PyDataset`) recognised without importing."""

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

    Examples:
    >>> is_batch_stream((1, 2))
    False
    """
    return is_tf_dataset(value) or is_py_dataset(value)


def iterate_batches(stream):
    """The batches of one pass over a `tf.data.Dataset` or a `keras.utils.PyDataset`, in order."""
    if is_py_dataset(stream):
        for step in range(len(stream)):
            yield stream[step]
    else:
        yield from stream


def stream_length(stream):
    """Batches in one pass of `stream`, or `None` when unknown without iterating."""
    if is_py_dataset(stream):
        return len(stream)
    cardinality = int(stream.cardinality())
    return cardinality if cardinality >= 0 else None
