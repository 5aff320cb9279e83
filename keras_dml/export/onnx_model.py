"""Export to ONNX: one graph `images -> embedding`, checked with onnx and onnxruntime."""

import os

import keras

from keras_dml.export.backend_support import check_onnx_backend, check_onnx_opset
from keras_dml.export.contract import (
    INPUT_NAME,
    OUTPUT_NAME,
    check_exportable,
    check_input_dtype,
    keras_embeddings,
    resolve_image_shape,
    sample_images,
)
from keras_dml.export.float32_model import float32_inference_model, source_difference
from keras_dml.export.onnx_tensorflow import tensorflow_onnx_graph
from keras_dml.export.onnx_torch import BATCH_DIM_NAME, torch_onnx_graph
from keras_dml.export.output_path import check_output_path
from keras_dml.export.report import ExportReport, check_parity
from keras_dml.utils import optional_import
from keras_dml.utils.version import __version__

DEFAULT_OPSET = 18  # the lowest the PyTorch exporter writes

# Keras backend -> `(model, image_shape, dtype, opset) -> (proto, num_variables, excluded)`.
CONVERTERS = {"tensorflow": tensorflow_onnx_graph, "torch": torch_onnx_graph}


def export_onnx(
    model,
    path,
    opset=DEFAULT_OPSET,
    input_dtype="float32",
    image_size=None,
    verify=True,
    atol=1e-5,
    num_check_images=4,
):
    """Exports an embedding model to an ONNX file.

    Args:
        model: `keras.Model`. A built keras_dml model whose `call(images)` returns `[N, D]`.
        path: str or path-like. The `.onnx` file to write (parent folders are created).
        opset: int. ONNX opset version (18 or later on PyTorch). Defaults to `18`.
        input_dtype: str. `"float32"` or `"uint8"`. Defaults to `"float32"`.
        image_size: int or `(height, width)`. Only for a model that accepts any size. Defaults to
            `None`.
        verify: bool. Compare onnxruntime with Keras on random images. Defaults to `True`.
        atol: float. Parity tolerance (max absolute difference). Defaults to `1e-5`.
        num_check_images: int. Images used by the parity check. Defaults to `4`.

    Returns:
        `ExportReport`.

    Raises:
        ExportError: the model is not built, its input size is unknown, `input_dtype` or
            `opset` is bad, or the backend is JAX.
        MissingDependencyError: onnx, onnxruntime or onnxscript (`keras-dml[onnx]`) or tf2onnx
            (`keras-dml[onnx-tensorflow]`) is missing.
        ExportParityError: `verify=True` and onnxruntime's output differs from Keras.
        OSError: `path` cannot be written, raised before any work on the model.

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.EmbeddingModel(backbone, embedding_dim=64)
    >>> report = keras_dml.export.export_onnx(model, "/tmp/emb.onnx", input_dtype="uint8")
    """
    check_output_path(path, "file")  # before any work on the model
    backend = check_onnx_backend()
    opset = check_onnx_opset(opset, backend)
    onnx = optional_import("onnx", feature="ONNX export")
    check_exportable(model)
    (dtype,) = check_input_dtype(input_dtype)
    image_shape = resolve_image_shape(model, image_size)
    path = os.fspath(path)

    source, (model, policy) = model, float32_inference_model(model)
    proto, num_variables, excluded = CONVERTERS[backend](model, image_shape, dtype, opset)
    _name_io(proto)
    _add_metadata(onnx, proto, model, image_shape, policy)
    onnx.checker.check_model(proto)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(proto, path)

    report = ExportReport(
        path=path,
        format="onnx",
        input_name=INPUT_NAME,
        output_name=OUTPUT_NAME,
        input_dtypes=[dtype],
        image_shape=list(image_shape),
        embedding_dim=_output_dim(proto),
        learner_dims=_learner_dims(model),
        num_variables=num_variables,
        num_model_weights=len(model.weights),
        excluded_weights=excluded,
        opset=opset,
        source_dtype_policy=policy,
    )
    if verify:
        ort = optional_import("onnxruntime", feature="verifying an ONNX export")
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        images = sample_images(image_shape, num_check_images, dtype)
        (actual,) = session.run([OUTPUT_NAME], {INPUT_NAME: images})
        report.max_abs_diff[dtype] = check_parity(
            actual, keras_embeddings(model, images), atol, f"ONNX file {path} ({dtype} input)"
        )
        if policy is not None:
            report.max_abs_diff_source[dtype] = source_difference(actual, source, images)
    return report


def _name_io(proto):
    """Makes sure the graph's input is `images`, its output `embedding`, batch dim `batch`."""
    graph = proto.graph
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise RuntimeError(
            f"Expected one input and one output in the converted graph, got "
            f"{[i.name for i in graph.input]} -> {[o.name for o in graph.output]}."
        )
    _rename_constant_named_like_the_output(graph)
    renames = {graph.input[0].name: INPUT_NAME, graph.output[0].name: OUTPUT_NAME}
    for old, new in renames.items():
        if old != new:
            _rename_value(graph, old, new)
    graph.input[0].name = INPUT_NAME
    graph.output[0].name = OUTPUT_NAME
    for value in (graph.input[0], graph.output[0]):
        dim = value.type.tensor_type.shape.dim[0]
        if not dim.HasField("dim_value"):
            dim.dim_param = BATCH_DIM_NAME


def _value_names(graph):
    names = {value.name for value in (*graph.input, *graph.output, *graph.initializer)}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
    return names


def _unused_name(graph, name):
    names, candidate, number = _value_names(graph), name, 0
    while candidate in names:
        number += 1
        candidate = f"{name}_{number}"
    return candidate


def _rename_constant_named_like_the_output(graph):
    """Renames an initializer that has the output's name (PyTorch's exporter names a folded
    constant `embedding`, e.g. a ViT's position embeddings), with the nodes that read it: those
    before the node that computes the output."""
    name = graph.output[0].name
    constants = [value for value in graph.initializer if value.name == name]
    if not constants:
        return
    new = _unused_name(graph, f"{name}_constant")
    constants[0].name = new
    for node in graph.node:
        if name in node.output:
            break
        node.input[:] = [new if value == name else value for value in node.input]


def _rename_value(graph, old, new):
    """Renames the value `old` to `new` wherever the graph names it."""
    for node in graph.node:
        node.input[:] = [new if name == old else name for name in node.input]
        node.output[:] = [new if name == old else name for name in node.output]
    for value in (*graph.input, *graph.output, *graph.initializer, *graph.value_info):
        if value.name == old:
            value.name = new


def _add_metadata(onnx, proto, model, image_shape, policy=None):
    """Records what a client needs beyond the graph: learner slices and the input range."""
    learner_dims = _learner_dims(model)
    entries = {
        "keras_dml.version": __version__,
        "keras_dml.model_class": type(model).__name__,
        "keras_dml.image_shape": ",".join(str(d) for d in image_shape),
        "keras_dml.input_range": "raw RGB pixels in [0, 255], NHWC",
        "keras_dml.embedding": "concatenated per-learner L2-normalised embeddings",
    }
    if learner_dims is not None:
        entries["keras_dml.learner_dims"] = ",".join(str(d) for d in learner_dims)
    weights = getattr(model, "learner_weights", None)
    if weights is not None:
        entries["keras_dml.learner_weights"] = ",".join(repr(float(w)) for w in weights)
    if policy is not None:
        entries["keras_dml.trained_dtype_policy"] = f"{policy} (exported graph computes in float32)"
    onnx.helper.set_model_props(proto, entries)
    proto.producer_name = f"keras-dml {__version__} (keras {keras.__version__})"
    proto.doc_string = f"{model.name}: images [batch, H, W, C] -> embedding [batch, D]"


def _output_dim(proto):
    return int(proto.graph.output[0].type.tensor_type.shape.dim[-1].dim_value)


def _learner_dims(model):
    dims = getattr(model, "learner_dims", None)
    return None if dims is None else [int(d) for d in dims]
