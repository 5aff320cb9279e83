"""Configuration-driven training runs (CLI `keras-dml train`, `training/train.py`, the demo).

The top floor of the package: it imports `keras_dml.models` (whose import registers every method)
and nothing imports it. `run_config` holds the typed run configuration (`RunConfig`),
`fit_to_data` the settings fitted to the training split, `run` the training run (`train`).
"""

from keras_dml.methods import MethodSpec, get_method, list_methods, register_method
from keras_dml.training.run import evaluate_model, load_splits, train
from keras_dml.training.run_config import RunConfig, load_config, resolve_config

__all__ = [
    "MethodSpec",
    "RunConfig",
    "evaluate_model",
    "get_method",
    "list_methods",
    "load_config",
    "load_splits",
    "register_method",
    "resolve_config",
    "train",
]
