"""ONNX from the PyTorch backend, without TensorFlow: `torch.onnx.export` of a serving module."""

import io
import warnings

from keras_dml.export.contract import INPUT_NAME, OUTPUT_NAME, ExportError, sample_images
from keras_dml.serving.input_contract import nan_rows_for_nonfinite_images
from keras_dml.utils import optional_import

BATCH_DIM_NAME = "batch"
TRACE_BATCH = 2  # not 1: a traced batch of 1 may be specialised into the graph's shapes

# TorchScript tracing warnings about Python values taken from tensors (shapes, checks) in
# Keras' layers: the values are fixed by the export's input shape, so the trace is exact.
QUIET_TRACER_MESSAGES = (
    r".*Converting a tensor to a Python.*",
    r".*Iterating over a tensor.*",
    r".*Using len to get tensor shape.*",
    r".*results are registered as constants in the trace.*",
    r".*export will treat it as a constant.*",
    # The TorchScript exporter is the one that keeps the batch dynamic (module docstring).
    r".*legacy TorchScript-based ONNX export.*",
)


def serving_module(model, dtype="float32"):
    """The `torch.nn.Module` (eval mode) exported for one input dtype: `images -> embedding`.

    Raises:
        ExportError: (when called) the model does not return one `[N, D]` tensor.
    """
    import torch

    class ServingModule(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model  # a Keras layer on PyTorch is a `torch.nn.Module`

        def forward(self, images):
            images = images.to(torch.float32)
            embedding = self.model(images, training=False)
            if isinstance(embedding, (list, tuple, dict)) or embedding.dim() != 2:
                raise ExportError(
                    f"Model '{model.name}' must return ONE embedding tensor [N, D] from "
                    "`call(images)` (the keras_dml model contract); training-only outputs "
                    f"belong in `compute_loss`. Received: {embedding!r}"
                )
            # The input contract (keras_dml.serving): NaN rows for images with NaN / Inf pixels.
            return nan_rows_for_nonfinite_images(images, embedding.to(torch.float32))

    return ServingModule().eval()


def read_weights(module, model, images):
    """The float weights of `model` that `module(images)` has a gradient path to, in model order."""
    import torch

    weights = [w for w in model.weights if w.dtype.startswith(("float", "bfloat"))]
    values = [w.value for w in weights]
    trainable = [value.requires_grad for value in values]
    try:
        for value in values:
            value.requires_grad_(True)
        with torch.enable_grad():
            output = module(images)
            if not output.requires_grad:
                return []
            grads = torch.autograd.grad(output.sum(), values, allow_unused=True)
    finally:
        for value, flag in zip(values, trainable):
            value.requires_grad_(flag)
    return [w for w, grad in zip(weights, grads) if grad is not None]


def torch_onnx_graph(model, image_shape, dtype, opset):
    """`(proto, num_variables, excluded_weights)` of `model`'s serving module for one dtype.

    Raises:
        MissingDependencyError: onnx is not installed.
    """
    import torch

    onnx = optional_import("onnx", feature="ONNX export")
    module = serving_module(model, dtype)
    images = torch.from_numpy(sample_images(image_shape, TRACE_BATCH, dtype))
    read = read_weights(module, model, images)
    buffer = io.BytesIO()
    with warnings.catch_warnings(), torch.no_grad():
        for message in QUIET_TRACER_MESSAGES:
            warnings.filterwarnings("ignore", message=message)
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.onnx")
        torch.onnx.export(
            module,
            (images,),
            buffer,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: BATCH_DIM_NAME}, OUTPUT_NAME: {0: BATCH_DIM_NAME}},
            opset_version=opset,
            do_constant_folding=True,
            dynamo=False,  # the dynamo exporter needs onnxscript and static shapes
        )
    proto = onnx.load_from_string(buffer.getvalue())
    used = {id(w) for w in read}
    return proto, len(read), [w.path for w in model.weights if id(w) not in used]
