"""Fixtures of the hub preset tests: a tiny Divide & Conquer model, saved once as a preset."""

import keras
import numpy as np
import pytest

from keras_dml import backbones, zoo
from keras_dml.methods import get_method

TRAINING = {"dataset": "digits", "protocol": "digits 0-5 train, 6-9 test"}
METRICS = {"recall@1": 0.5, "split": "test", "command": "keras-dml evaluate M --json"}
CARD = dict(name="tiny-dc", method="dc", backbone="convnet", training=TRAINING, metrics=METRICS)


def tiny_model():
    """A seeded Divide & Conquer model on the 32 px convnet (a registered, subclassed model)."""
    keras.utils.set_random_seed(0)
    return get_method("dc").tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))


@pytest.fixture(scope="session")
def preset_images():
    return np.random.default_rng(0).uniform(0, 255, size=(3, 32, 32, 3)).astype("float32")


@pytest.fixture(scope="session")
def tiny_preset(tmp_path_factory, preset_images):
    """`(folder, predictions)`: the tiny model saved as a hub preset once, and its output."""
    model = tiny_model()
    folder = zoo.save_hub_preset(model, tmp_path_factory.mktemp("hub") / "tiny-dc", **CARD)
    return folder, model.predict(preset_images, verbose=0)
