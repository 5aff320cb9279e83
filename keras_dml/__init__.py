"""keras-dml: ensemble deep metric learning for Keras 3 on TensorFlow, JAX and PyTorch.

Sub-packages load on first use (`keras_dml.models`, `keras_dml.data`, ...), so `import keras_dml`
stays cheap and the CLI's light commands start fast.
"""

import importlib

__version__ = "0.1.0"

_SUBPACKAGES = (
    "backbones",
    "data",
    "evaluation",
    "export",
    "layers",
    "losses",
    "miners",
    "models",
    "search",
    "serving",
    "training",
    "utils",
    "visualization",
    "zoo",
)


def __getattr__(name):
    if name in _SUBPACKAGES:
        return importlib.import_module(f"keras_dml.{name}")
    raise AttributeError(f"module 'keras_dml' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_SUBPACKAGES])
