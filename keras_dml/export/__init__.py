"""SavedModel and ONNX export of keras_dml embedding models.

Every exported artifact takes `images` (raw pixels `[N, H, W, C]` in [0, 255], `float32` or
`uint8`, dynamic batch, the model's fixed input size) and returns `embedding` (`[N, D]`), with the
model's own preprocessing inside and training-only parts left out.

Examples:
>>> from keras_dml.export import export_onnx, export_saved_model
>>> export_saved_model(model, "exported/saved_model", input_dtype="both")  # doctest: +SKIP
>>> export_onnx(model, "exported/model.onnx", opset=17)  # doctest: +SKIP
"""

from keras_dml.export.onnx_model import export_onnx
from keras_dml.export.report import ExportParityError, ExportReport
from keras_dml.export.saved_model import export_saved_model
from keras_dml.export.signature import INPUT_NAME, OUTPUT_NAME, ExportError

__all__ = [
    "INPUT_NAME",
    "OUTPUT_NAME",
    "ExportError",
    "ExportParityError",
    "ExportReport",
    "export_onnx",
    "export_saved_model",
]
