"""Which Keras backend exports which format, and the one-line error where it cannot.

- TensorFlow: ONNX through tf2onnx on the traced serving function (`onnx_tensorflow`), and
  SavedModel.
- PyTorch: ONNX through `torch.onnx.export` of the serving module (`onnx_torch`), without
  TensorFlow; no SavedModel.
- JAX: neither (Keras converts JAX to ONNX with jax2onnx, which keras-dml does not install).

A `.keras` file loads on every backend, so the fix for a refused export is the backend that
exports it (`KERAS_BACKEND=torch` for ONNX without TensorFlow).
"""

import keras

from keras_dml.export.contract import ExportError

ONNX_BACKENDS = ("tensorflow", "torch")


def check_onnx_backend(backend=None):
    """Returns the Keras backend name when it exports ONNX, else raises a one-line error.

    Args:
        backend: str or `None`. Defaults to `None` (the running backend).

    Returns:
        str, `"tensorflow"` or `"torch"`.

    Raises:
        ExportError: on another backend (JAX), naming the backends that export.

    Examples:
    >>> check_onnx_backend("torch")
    'torch'
    """
    backend = backend or keras.backend.backend()
    if backend not in ONNX_BACKENDS:
        raise ExportError(
            f"ONNX export runs on the PyTorch or TensorFlow backend, not on {backend} (Keras "
            "converts JAX with jax2onnx, which keras-dml does not install): export with "
            "KERAS_BACKEND=torch (no TensorFlow needed; the .keras file loads on every backend) "
            "or KERAS_BACKEND=tensorflow."
        )
    return backend


def check_saved_model_backend(backend=None):
    """Raises a one-line error unless the running backend can write a SavedModel (TensorFlow).

    Checked before TensorFlow is imported, so it answers where TensorFlow is not installed.

    Args:
        backend: str or `None`. Defaults to `None` (the running backend).

    Raises:
        ExportError: on the JAX or PyTorch backend.

    Examples:
    >>> check_saved_model_backend("tensorflow")
    """
    backend = backend or keras.backend.backend()
    if backend != "tensorflow":
        raise ExportError(
            f"SavedModel export needs TensorFlow (the Keras backend is {backend}): pip install "
            '"keras-dml[tensorflow]" and set KERAS_BACKEND=tensorflow, or export ONNX with '
            "format='onnx'."
        )
