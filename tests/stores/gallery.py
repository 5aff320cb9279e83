"""A tiny two-learner model, one with other weights, and a folder of coloured images (no ties)."""

import os

import keras
import numpy as np
import pytest
from PIL import Image

from keras_dml import backbones
from keras_dml.methods import get_method
from keras_dml.search import EmbeddingIndex
from keras_dml.stores import MilvusStore, model_identity

COLOURS = {"cat": (220, 40, 40), "dog": (40, 40, 220), "owl": (40, 200, 40)}


def make_gallery(root, per_class=5):
    """`root/model.keras`, `root/other.keras` (other weights) and `root/photos/<class>/<i>.png`."""
    os.makedirs(root, exist_ok=True)
    for name, seed in (("model", 0), ("other", 1)):
        keras.utils.set_random_seed(seed)
        model = get_method("baseline").tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
        model.save(os.path.join(root, f"{name}.keras"))
    rng = np.random.default_rng(0)
    for name, colour in COLOURS.items():
        os.makedirs(os.path.join(root, "photos", name), exist_ok=True)
        for i in range(per_class):
            shade = np.array(colour) * rng.uniform(0.3, 1.0)  # no two images tie
            pixels = np.clip(shade + rng.normal(0, 60, (32, 32, 3)), 0, 255)
            path = os.path.join(root, "photos", name, f"{i}.png")
            Image.fromarray(pixels.astype(np.uint8)).save(path)
    return os.path.join(root, "model.keras"), os.path.join(root, "photos")


def store_from_folder(uri, model, folder, index="flat"):
    """A store filled in one process from an exact `EmbeddingIndex` of `folder`: the reference."""
    exact = EmbeddingIndex(model=model)
    exact.add(folder)
    store = MilvusStore(uri).prepare(model_identity(exact.embedder, model), index)
    labels = [exact.class_names[label] for label in exact.labels]
    store.write(exact.ids, exact.embeddings, labels, exact.ids)
    return store, exact


def skip_without(*modules):
    """Skips the calling test module unless every engine module is installed."""
    for module in modules:
        pytest.importorskip(module)


def gallery_folder(factory, name):
    """`(root, model, folder)`: `make_gallery` in a new temporary folder of `factory`."""
    root = factory.mktemp(name)
    return (root, *make_gallery(str(root)))
