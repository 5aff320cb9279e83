"""ONNX from the TensorFlow backend: tf2onnx on the traced serving function.

Conversion goes through `tf2onnx.convert.from_function` on the same traced serving function the
SavedModel export uses, which is what `keras.Model.export(format="onnx")` does internally
(`tf2onnx.convert.from_keras` is unreliable with Keras 3). Tracing our own function gives the
graph its input name `images` (from the `tf.TensorSpec`) and output name `embedding` (from the
returned dict) and lets the graph take uint8 pixels.
"""

from keras_dml.export.signature import (
    captured_variables,
    excluded_weights,
    input_spec,
    serving_function,
)
from keras_dml.utils import optional_import


def tensorflow_onnx_graph(model, image_shape, dtype, opset):
    """Converts `model`'s serving function for one input dtype to an ONNX `ModelProto`.

    Args:
        model: `keras.Model`. A built float32 embedding model (TensorFlow backend).
        image_shape: tuple `(H, W, C)`.
        dtype: str. `"float32"` or `"uint8"`.
        opset: int. ONNX opset version.

    Returns:
        tuple `(proto, num_variables, excluded_weights)`: the graph (input and output names as
        tf2onnx gives them), the number of variables it reads and the paths of the model
        weights it does not read.

    Raises:
        MissingDependencyError: tf2onnx is not installed.
    """
    tf2onnx = optional_import("tf2onnx", feature="ONNX export")
    function = serving_function(model, image_shape, dtype)
    variables = captured_variables([function])
    _patch_tf2onnx(tf2onnx)
    proto, _ = tf2onnx.convert.from_function(
        function, input_signature=[input_spec(image_shape, dtype)], opset=opset
    )
    return proto, len(variables), list(excluded_weights(model, variables))


def _patch_tf2onnx(tf2onnx):
    """Applies Keras's numpy>=2 fixes to tf2onnx releases before 1.17 (1.17 has them)."""
    version = tuple(int(p) for p in tf2onnx.__version__.split(".")[:2] if p.isdigit())
    if version >= (1, 17):
        return
    try:
        from keras.src.export.tf2onnx_lib import patch_tf2onnx
    except ImportError:  # A Keras without the patch: tf2onnx is used as installed.
        return
    patch_tf2onnx()
