"""Configuration-driven training runs (CLI `keras-dml train`, `training/train.py`, the demo).

The top floor of the package: it imports `keras_dml.models` (whose import registers every method)
and no model imports it.
"""

from keras_dml.models.config import load_config, resolve_config
from keras_dml.models.registry import MethodSpec, get_method, list_methods, register_method
from keras_dml.training.run import evaluate_model, load_splits, train

__all__ = [
    "MethodSpec",
    "evaluate_model",
    "get_method",
    "list_methods",
    "load_config",
    "load_splits",
    "register_method",
    "resolve_config",
    "train",
]
