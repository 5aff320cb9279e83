"""The run's TensorBoard logs (`logs/`), written where TensorFlow's `tf.summary` is installed."""

import os
import warnings

import keras


def tensorflow_summary_available():
    """Whether `tensorflow.summary` imports (always on the TensorFlow backend)."""
    if keras.backend.backend() == "tensorflow":
        return True
    try:
        import tensorflow.summary  # noqa: F401 (optional dependency: tensorflow, for the logs)
    except ImportError:
        return False
    return True


def tensorboard_callbacks(output_dir):
    """`[TensorBoard(output_dir/logs)]`, or `[]` with a warning when TensorFlow is missing."""
    if tensorflow_summary_available():
        log_dir = os.path.join(output_dir, "logs")
        return [keras.callbacks.TensorBoard(log_dir, write_graph=False)]
    warnings.warn(
        f"TensorBoard logs need TensorFlow (tf.summary), which is not installed, so this "
        f"{keras.backend.backend()} run writes no logs/ (history.json has every epoch's "
        'values); pip install "keras-dml[tensorflow]" to get them.',
        stacklevel=2,
    )
    return []
