"""Which Keras backend exports which format, and the one-line error where it cannot."""

import keras

from keras_dml.export.contract import ExportError

ONNX_BACKENDS = ("tensorflow", "torch")
# The lowest opset each backend's exporter writes: torch.onnx's dynamo exporter writes 18 when
# asked for less; tf2onnx and ONNX Runtime go down to 13.
MIN_OPSETS = {"tensorflow": 13, "torch": 18}


def check_onnx_backend(backend=None):
    """Returns the backend (default: the running one) if it exports ONNX, else raises `ExportError`.

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
    """Raises a one-line `ExportError` unless the backend (default: running) is TensorFlow."""
    backend = backend or keras.backend.backend()
    if backend != "tensorflow":
        raise ExportError(
            f"SavedModel export needs TensorFlow (the Keras backend is {backend}): pip install "
            '"keras-dml[tensorflow]" and set KERAS_BACKEND=tensorflow, or export ONNX with '
            "format='onnx'."
        )


def check_onnx_opset(opset, backend=None):
    """Returns `opset` as an int if the backend's (default: running) exporter writes it.

    Raises:
        ExportError: `opset` is below what the backend's ONNX exporter writes.
    """
    backend = backend or keras.backend.backend()
    lowest = MIN_OPSETS.get(backend, 13)
    if int(opset) < lowest:
        raise ExportError(
            f"`opset` must be >= {lowest} for ONNX export on the {backend} backend. Received: "
            f"opset={opset}; pass opset={lowest} or later (CLI: --opset {lowest})."
        )
    return int(opset)
