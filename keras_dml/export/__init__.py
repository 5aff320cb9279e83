"""SavedModel and ONNX export of keras_dml embedding models.

Every exported artifact takes `images` (raw pixels `[N, H, W, C]` in [0, 255], `float32` or
`uint8`, dynamic batch, the model's fixed input size) and returns `embedding` (`[N, D]`), with the
model's own preprocessing inside and training-only parts left out. ONNX exports on the TensorFlow
backend (tf2onnx) and on PyTorch without TensorFlow (`torch.onnx.export`); SavedModel is a
TensorFlow feature and refuses in one line elsewhere (`keras_dml.export.backend_support`).

Examples:
>>> from keras_dml.export import export_onnx, export_saved_model
>>> export_saved_model(model, "exported/saved_model", input_dtype="both")  # doctest: +SKIP
>>> export_onnx(model, "exported/model.onnx", opset=17)  # doctest: +SKIP
"""

import importlib

# Loaded on first use, so that `keras-dml --help` (which wires in the export command) does not
# import TensorFlow.
_LAZY = {
    "export_onnx": "keras_dml.export.onnx_model",
    "ExportParityError": "keras_dml.export.report",
    "ExportReport": "keras_dml.export.report",
    "export_saved_model": "keras_dml.export.saved_model",
    "INPUT_NAME": "keras_dml.export.contract",
    "OUTPUT_NAME": "keras_dml.export.contract",
    "ExportError": "keras_dml.export.contract",
}

__all__ = [
    "INPUT_NAME",
    "OUTPUT_NAME",
    "ExportError",
    "ExportParityError",
    "ExportReport",
    "export_onnx",
    "export_saved_model",
]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'keras_dml.export' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])
