"""Run configurations for tests that call a method's hooks directly."""

import types

import numpy as np

from keras_dml.training import RunConfig, resolve_run


def config_dict(entries):
    """`entries` read as a run configuration (defaults filled, values checked), as a dict."""
    return RunConfig.from_dict(entries).to_dict()


def config_file_dict(path):
    """The run configuration of a JSON file, as a dict."""
    return RunConfig.from_json(path).to_dict()


def resolved_dict(entries, splits=None):
    """`entries` resolved on `splits` (`resolve_run`: batches, learners, loss), as a dict;
    without splits, on a training split of 4 classes x 8 images (digits' train classes)."""
    if splits is None:
        labels = np.repeat(np.arange(4), 8)
        splits = {"train": types.SimpleNamespace(labels=labels, num_classes=4)}
    return resolve_run(entries, splits).to_dict()
