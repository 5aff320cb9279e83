"""What a run report needs from a run folder: its files, its model, a bounded test sample."""

import glob
import json
import os
import re

import keras
import numpy as np

import keras_dml.models  # noqa: F401 (registers the model classes)
from keras_dml.data.batch_streams import iterate_batches

RUN_FILES = ("config.json", "metrics.json", "history.json")


def read_json(path):
    """The parsed JSON file at `path`, or `None` when it does not exist."""
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)


def read_run(run_dir):
    """`config`, `metrics` and `history` of a run folder (`ValueError` without `config.json`)."""
    config = read_json(os.path.join(run_dir, "config.json"))
    if config is None:
        raise ValueError(
            f"{run_dir} has no config.json; pass a run folder written by `keras-dml train` "
            "(or keras_dml.training.train). Received: run_dir="
            f"{run_dir!r}"
        )
    return {
        "config": config,
        "metrics": read_json(os.path.join(run_dir, "metrics.json")),
        "history": read_json(os.path.join(run_dir, "history.json")),
    }


def load_run_model(run_dir):
    """`(model, file name)`: `model.keras`, else `best.keras`, safe mode, not compiled."""
    for name in ("model.keras", "best.keras"):
        path = os.path.join(run_dir, name)
        if os.path.isfile(path):
            return keras.saving.load_model(path, safe_mode=True, compile=False), name
    raise ValueError(
        f"{run_dir} holds no model.keras or best.keras; the run did not finish saving a model."
    )


def sample_images(data, count, image_size, seed=0, batch_size=64):
    """A seeded random sample of `count` images of an `ImageDataset`, evaluation-preprocessed.

    Returns:
        `(images [n, H, W, 3] float32 raw pixels, labels [n], sorted positions [n])`.
    """
    total = len(data)
    positions = np.arange(total)
    if total > count:
        positions = np.sort(np.random.default_rng(seed).choice(total, count, replace=False))
    subset = data.subset(positions)
    images = [
        np.asarray(batch[0], dtype=np.float32)
        for batch in iterate_batches(
            subset.as_dataset(training=False, batch_size=batch_size, image_size=image_size)
        )
    ]
    return np.concatenate(images), subset.labels.astype(np.int64), positions.astype(np.int64)


def training_clusters(run_dir, model, config, num_train):
    """The training cluster (learner) of every training image, `[num_train]`, or `None`."""
    if hasattr(model, "get_cluster_assignment"):
        assignment = model.get_cluster_assignment()
        if assignment is not None and len(assignment) == num_train:
            return np.asarray(assignment, dtype=np.int64)
    state_dir = (config.get("method_options") or {}).get("state_dir") or os.path.join(
        run_dir, "state"
    )
    files = glob.glob(os.path.join(state_dir, "division_*.npz"))
    if not files:
        return None

    def number(path):
        found = re.search(r"division_(\d+)\.npz$", path)
        return int(found.group(1)) if found else -1

    with np.load(max(files, key=number)) as state:
        assignment = state["assignment"].astype(np.int64)
    return assignment if len(assignment) == num_train else None
