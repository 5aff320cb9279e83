"""Every registered method trains through every entry point.

`keras_dml.training.train` with in-memory `from_arrays` splits (hierarchical D&C used to reload
its training set by name and fail with "Unknown dataset 'arrays'"), `keras-dml train` with its
defaults on digits (batch composition and learner counts fitted to the 4 training classes), and a
plain Keras script built from the method's hooks (`model.fit`, `predict`, `.keras` round trip).
"""

import json
import os

import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.data import from_arrays
from keras_dml.methods import get_method, list_methods
from keras_dml.methods.defaults import compile_with_config, m_per_class_batches
from keras_dml.training import train
from keras_dml_cli import main
from tests.support.ci_rotation import rotating
from tests.support.configs import resolved_dict


def array_splits(num_classes=12, per_class=5, size=32):
    """Class-coloured noise images split by class (5 train, 1 val, 6 test)."""
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(num_classes), per_class)
    colours = rng.integers(0, 256, size=(num_classes, 1, 1, 3))
    noise = rng.integers(-40, 40, size=(len(labels), size, size, 3))
    images = np.clip(colours[labels] + noise, 0, 255).astype("uint8")
    return {
        split: from_arrays(images, labels, split=split, val_fraction=0.2)
        for split in ("train", "val", "test")
    }


# The default suite runs the regression (hierarchical D&C); the slow suite runs every method
# (CI's bounded run a rotating third of them).
IN_MEMORY_CASES = ["hdc"] + rotating(
    [m for m in list_methods() if m != "hdc"], marks=(pytest.mark.slow,)
)


@pytest.mark.parametrize("method", IN_MEMORY_CASES)
def test_train_with_in_memory_splits(method, tmp_path):
    splits = array_splits()
    config = {"method": method, "dataset": "arrays", "epochs": 1, "image_size": 32}
    result = train(config, str(tmp_path), verbose=0, splits=splits)
    assert np.isfinite(result["history"]["loss"][0])
    assert 0.0 <= result["metrics"]["recall@1"] <= 1.0
    written = json.loads((tmp_path / "config.json").read_text())
    assert written["batch_size"] % written["m_per_class"] == 0
    assert written["batch_size"] // written["m_per_class"] <= 5
    # One selection rule: best.keras is the epoch with the best validation MAP@R.
    record = json.loads((tmp_path / "best.keras.json").read_text())
    assert record["monitor"] == "val_map@r"
    assert record["value"] == max(result["history"]["val_map@r"])


@pytest.mark.slow
@pytest.mark.parametrize("method", rotating(list_methods()))
def test_cli_defaults_train_every_method_on_digits(method, tmp_path, capsys):
    argv = ["train", "--method", method, "--dataset", "digits", "--epochs", "1"]
    assert main([*argv, "--output", str(tmp_path), "--quiet"]) == 0, capsys.readouterr().err
    config = json.loads((tmp_path / "config.json").read_text())
    assert (config["batch_size"], config["m_per_class"]) == (64, 16)
    assert os.path.isfile(tmp_path / "best.keras") and os.path.isfile(tmp_path / "model.keras")


@pytest.mark.slow
@pytest.mark.parametrize("method", rotating(list_methods()))
def test_plain_keras_script_trains_every_method(method, tmp_path):
    splits = array_splits()
    spec = get_method(method)
    config = resolved_dict({"method": method, "dataset": "arrays", "image_size": 32}, splits)
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))
    model = spec.build(config, backbone, splits)
    (spec.compile or compile_with_config)(config, model)
    dataset, callbacks = (spec.prepare or m_per_class_batches)(config, model, splits)
    history = model.fit(dataset, epochs=1, callbacks=callbacks, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    images = next(iter(splits["test"].as_tf_dataset(batch_size=4)))[0]
    embeddings = model.predict(images, verbose=0)
    path = str(tmp_path / "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(reloaded.predict(images, verbose=0), embeddings, atol=1e-5)
