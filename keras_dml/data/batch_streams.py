"""Batched datasets (`tf.data.Dataset`, `keras.utils.PyDataset`) recognised without TensorFlow.

Functions that accept "arrays or a batched dataset" ask `is_batch_stream` instead of
`isinstance(x, tf.data.Dataset)`, so they import on JAX and PyTorch where TensorFlow is absent: a
`tf.data.Dataset` can only exist once `tensorflow` is imported, so `sys.modules` answers.
"""

import sys

import keras


def is_tf_dataset(value):
    """Whether `value` is a `tf.data.Dataset`, without importing TensorFlow.

    Args:
        value: any object.

    Returns:
        bool.

    Examples:
    >>> is_tf_dataset([1, 2])
    False
    """
    tensorflow = sys.modules.get("tensorflow")
    return tensorflow is not None and isinstance(value, tensorflow.data.Dataset)


def is_batch_stream(value):
    """Whether `value` yields batches: a `tf.data.Dataset` or a `keras.utils.PyDataset`.

    Args:
        value: any object.

    Returns:
        bool.

    Examples:
    >>> is_batch_stream(np.zeros((4, 8, 8, 3)))
    False
    """
    return is_tf_dataset(value) or isinstance(value, keras.utils.PyDataset)


def iterate_batches(stream):
    """The batches of one pass over `stream`, in order.

    A `keras.utils.PyDataset` is indexed `0 .. len(stream) - 1` (its `__len__` is the batches of
    an epoch); a `tf.data.Dataset` is iterated as it is.

    Args:
        stream: a `tf.data.Dataset` or a `keras.utils.PyDataset`.

    Yields:
        Each batch as the stream gives it (`images`, `(images, labels)` or `(images, targets)`).

    Examples:
    >>> for images, labels in iterate_batches(data.as_dataset(training=False, batch_size=64)):
    ...     pass
    """
    if isinstance(stream, keras.utils.PyDataset):
        for step in range(len(stream)):
            yield stream[step]
    else:
        yield from stream
