"""The exported graph's `images` -> `embedding` names never collide with a value of the graph."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from keras_dml.export.onnx_model import _name_io  # noqa: E402


def graph_with_a_constant_named_embedding():
    """x + c, then * 2, where the constant `c` is named `embedding` like the output (what
    PyTorch's exporter gives a folded ViT position embedding)."""
    constant = numpy_helper.from_array(np.arange(3, dtype="float32"), name="embedding")
    nodes = [
        helper.make_node("Add", ["x", "embedding"], ["sum"]),
        helper.make_node("Mul", ["sum", "two"], ["embedding"]),
    ]
    two = numpy_helper.from_array(np.array(2, dtype="float32"), name="two")
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", 3])],
        initializer=[constant, two],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_constant_named_like_the_output_is_renamed_with_its_readers():
    proto = graph_with_a_constant_named_embedding()
    _name_io(proto)
    onnx.checker.check_model(proto)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = session.run(["embedding"], {"images": np.ones((2, 3), "float32")})
    np.testing.assert_array_equal(out, 2 * (1 + np.arange(3, dtype="float32")[None].repeat(2, 0)))
