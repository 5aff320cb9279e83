"""Lazy imports of optional dependencies with an error that names the extra to install."""

import importlib

# module name -> (pip extra, pip package) used in the error message.
_EXTRAS = {
    "faiss": ("faiss", "faiss-cpu"),
    "onnx": ("onnx", "onnx"),
    "tf2onnx": ("onnx-tensorflow", "tf2onnx"),
    "onnxruntime": ("onnx", "onnxruntime"),
    "onnxscript": ("onnx", "onnxscript"),
    "matplotlib": ("vis", "matplotlib"),
    "matplotlib.pyplot": ("vis", "matplotlib"),
    "tf_keras_vis": ("vis", "tf-keras-vis"),
    "tensorflow_datasets": ("tfds", "tensorflow-datasets"),
    "tensorflow": ("tensorflow", "tensorflow"),
    "jax": ("jax", "jax[cpu]"),
    "torch": ("torch", "torch"),
    "apache_beam": ("beam", "apache-beam"),
    "pymilvus": ("milvus", "pymilvus"),
    "keras_hub": ("hub", "keras-hub"),
    "huggingface_hub": ("hub", "huggingface_hub"),
    "kagglehub": ("hub", "kagglehub"),
}


class MissingDependencyError(ImportError):
    """An optional dependency needed for the requested feature is not installed."""


def optional_import(module_name, feature=None):
    """Imports `module_name`, or raises `MissingDependencyError` naming the extra to install.

    `feature` names what the user asked for, in the message.
    """
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        top_level = module_name.split(".")[0]
        extra, package = _EXTRAS.get(module_name) or _EXTRAS.get(top_level, (None, top_level))
        what = f" for {feature}" if feature else ""
        hint = (
            f'pip install "keras-dml[{extra}]" (or pip install {package})'
            if extra
            else f"pip install {package}"
        )
        raise MissingDependencyError(
            f"`{module_name}` is needed{what} but is not installed. Install it with: {hint}."
        ) from error


def is_available(module_name):
    """Returns whether an optional dependency can be imported."""
    try:
        importlib.import_module(module_name)
    except ImportError:
        return False
    return True
