"""SavedModel and ONNX export of keras_dml embedding models: `images -> embedding`."""

from keras_dml.export.contract import INPUT_NAME, OUTPUT_NAME, ExportError
from keras_dml.export.onnx_model import export_onnx
from keras_dml.export.report import ExportParityError, ExportReport
from keras_dml.export.saved_model import export_saved_model

__all__ = [
    "INPUT_NAME",
    "OUTPUT_NAME",
    "ExportError",
    "ExportParityError",
    "ExportReport",
    "export_onnx",
    "export_saved_model",
]
