"""The run's TensorBoard logs (`logs/`), written where TensorFlow's summary writer exists.

`keras.callbacks.TensorBoard` writes through `tf.summary` on every backend. On JAX and PyTorch
without TensorFlow installed a run skips `logs/` with one warning instead of failing at its first
batch; `history.json` holds the same per-epoch values.
"""

import os
import warnings

import keras


def tensorflow_summary_available():
    """Whether `tensorflow.summary` imports (always on the TensorFlow backend).

    Returns:
        bool.
    """
    if keras.backend.backend() == "tensorflow":
        return True
    try:
        import tensorflow.summary  # noqa: F401 (optional dependency: tensorflow, for the logs)
    except ImportError:
        return False
    return True


def tensorboard_callbacks(output_dir):
    """`[keras.callbacks.TensorBoard(output_dir/logs)]`, or `[]` with a warning without TensorFlow.

    Args:
        output_dir: str. The run folder; the logs go to its `logs/`.

    Returns:
        list of Keras callbacks (one or none).

    Examples:
    >>> callbacks = tensorboard_callbacks("runs/x")  # doctest: +SKIP
    """
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
