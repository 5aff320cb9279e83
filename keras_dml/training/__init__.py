"""Configuration-driven training runs: `RunConfig` read once, `resolve_run` filled once, `train`."""

from keras_dml.training.resolve import resolve_run
from keras_dml.training.run import build_training, evaluate_model, load_splits, train
from keras_dml.training.run_config import RunConfig

__all__ = [
    "RunConfig",
    "build_training",
    "evaluate_model",
    "load_splits",
    "resolve_run",
    "train",
]
