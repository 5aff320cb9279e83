"""ONNX from the PyTorch backend, without TensorFlow: the dynamo exporter on a serving module."""

import logging
import warnings

from keras_dml.export.contract import INPUT_NAME, OUTPUT_NAME, ExportError, sample_images
from keras_dml.serving.input_contract import nan_rows_for_invalid_images
from keras_dml.utils import optional_import

BATCH_DIM_NAME = "batch"
TRACE_BATCH = 2  # not 0 or 1: torch.export specialises those sizes into the graph
# Loggers of torch.onnx and onnxscript that report what they skip (torchvision's operators).
QUIET_LOGGERS = ("torch.onnx", "onnxscript")


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
            return nan_rows_for_invalid_images(images, embedding.to(torch.float32))

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
        MissingDependencyError: onnx or onnxscript is not installed.
    """
    import torch

    optional_import("onnx", feature="ONNX export")
    optional_import("onnxscript", feature="ONNX export on PyTorch")
    module = serving_module(model, dtype)
    images = torch.from_numpy(sample_images(image_shape, TRACE_BATCH, dtype))
    read = read_weights(module, model, images)
    loggers = [logging.getLogger(name) for name in QUIET_LOGGERS]
    levels = [logger.level for logger in loggers]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", (DeprecationWarning, FutureWarning))
        for logger in loggers:
            logger.setLevel(logging.ERROR)
        try:
            program = torch.onnx.export(
                module,
                (images,),
                input_names=[INPUT_NAME],
                output_names=[OUTPUT_NAME],
                dynamic_shapes=({0: torch.export.Dim(BATCH_DIM_NAME)},),
                opset_version=opset,
                dynamo=True,
                verbose=False,
            )
        finally:
            for logger, level in zip(loggers, levels):
                logger.setLevel(level)
    used = {id(w) for w in read}
    return program.model_proto, len(read), [w.path for w in model.weights if id(w) not in used]
