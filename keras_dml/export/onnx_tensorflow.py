"""ONNX from the TensorFlow backend: tf2onnx on the traced serving function."""

from keras_dml.export.signature import (
    captured_variables,
    excluded_weights,
    input_spec,
    serving_function,
)
from keras_dml.utils import optional_import


def tensorflow_onnx_graph(model, image_shape, dtype, opset):
    """`(proto, num_variables, excluded_weights)` of `model`'s serving function for one dtype.

    Raises:
        MissingDependencyError: tf2onnx is not installed.
    """
    tf2onnx = optional_import("tf2onnx", feature="ONNX export")
    function = serving_function(model, image_shape, dtype, empty_batches=False)
    variables = captured_variables([function])
    _patch_tf2onnx(tf2onnx)
    # Our traced function, as keras.Model.export does (from_keras is unreliable with Keras 3).
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
