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
        function,
        input_signature=[input_spec(image_shape, dtype)],
        opset=opset,
        custom_op_handlers={"Erfc": (_erfc_as_one_minus_erf, [])},
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


def _erfc_as_one_minus_erf(ctx, node, name, args):
    """TensorFlow's `Erfc` (exact GELU, as in keras-hub's transformers) as ONNX `1 - Erf(x)`.

    tf2onnx has no `Erfc` conversion and ONNX no `Erfc` operator.
    """
    import numpy as np
    from tf2onnx import utils

    dtype = utils.map_onnx_to_numpy_type(ctx.get_dtype(node.input[0]))
    node.type = "Erf"
    one = ctx.make_const(utils.make_name(f"{node.name}_one"), np.array(1, dtype=dtype))
    difference = ctx.insert_new_node_on_output("Sub", node.output[0], name=utils.make_name(name))
    ctx.replace_inputs(difference, [one.output[0], node.output[0]])
    return node
