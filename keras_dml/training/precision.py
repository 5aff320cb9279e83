"""The `precision` setting of a run: the Keras dtype policy the model is built under."""

import contextlib

import keras

from keras_dml.training.run_config import PRECISIONS
from keras_dml.utils.suggestions import did_you_mean


def check_precision(name):
    """Raises a one-line `ValueError` unless `name` is one of `PRECISIONS`."""
    if name not in PRECISIONS:
        raise ValueError(
            f"Unknown `precision`.{did_you_mean(name, PRECISIONS)} Use one of {PRECISIONS} "
            "(CLI: --precision). "
            f"Received: precision={name!r}"
        )


@contextlib.contextmanager
def precision_policy(name):
    """Sets the global Keras dtype policy to `name` and restores the previous one on exit.

    Args:
        name: str. One of `PRECISIONS`.

    Examples:
    >>> with precision_policy("mixed_bfloat16"):
    ...     layer = keras.layers.Dense(2)
    >>> layer.compute_dtype, keras.config.dtype_policy().name
    ('bfloat16', 'float32')
    """
    check_precision(name)
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)
