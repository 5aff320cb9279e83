"""Configuration-driven training runs (CLI `keras-dml train`, `training/train.py`, the demo)."""

from keras_dml.training.config import load_config, resolve_config
from keras_dml.training.methods import MethodSpec, get_method, list_methods, register_method
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
