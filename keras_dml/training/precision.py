"""The `precision` setting of a run: the Keras dtype policy the model is built under.

`"mixed_float16"` and `"mixed_bfloat16"` compute most layers in 16 bits with float32 variables
(`keras.mixed_precision`); `keras.Model.compile` then wraps the optimizer in a
`keras.optimizers.LossScaleOptimizer` for `mixed_float16`, whose dynamic loss scale skips the
first steps whose scaled gradients overflow. What the methods keep in float32 whatever the
policy, and why: the model output (per-learner L2 normalisation casts to float32: unit vectors
whose dot products are compared at 1e-3 and below), every distance and loss (`keras_dml.losses`
casts its inputs: sums of exponentials overflow float16 at 65504), the loss layers' weights and
computation (their `dtype` defaults to float32), and the k-means inputs (the division's
embedding pass returns float32 NumPy).
"""

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

    Layers keep the policy they were built with, so a model built inside trains, saves and
    exports with it after the block.

    Args:
        name: str. `"float32"`, `"mixed_float16"` or `"mixed_bfloat16"`.

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
