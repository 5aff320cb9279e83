"""A new loss is one file: CONTRIBUTING's `toy_hinge` loss, read from the page, registers on
import, passes the test file the page gives for it and trains through `keras_dml.training.train`.
The files are read from CONTRIBUTING.md, so the recipe and this test cannot drift apart."""

import contextlib
import importlib.util
import os
import re
import sys
import types

import keras
import numpy as np

import keras_dml_cli.catalogue
from keras_dml.losses import LOSSES, list_losses
from keras_dml.training import train
from tests.support.helpers import colour_splits
from tests.support.paths import REPO_ROOT

LOSS_MODULE = "keras_dml.losses.toy_hinge"


def loss_section():
    with open(os.path.join(REPO_ROOT, "CONTRIBUTING.md")) as f:
        return f.read().split("## Adding a loss", 1)[1].split("\n## ", 1)[0]


def recipe_files():
    """`{relative path: code}` of the section's `py` blocks whose first line names their file."""
    return dict(re.findall(r"```py\n# (\S+\.py)\n(.*?)```", loss_section(), re.S))


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def recipe_loss(tmp_path):
    """The recipe's loss file imported as `keras_dml.losses.toy_hinge` (its place in the package),
    and its test file as a module; both are removed, and the loss unregistered, afterwards."""
    files = recipe_files()
    paths = {}
    for name, code in files.items():
        paths[name] = tmp_path / os.path.basename(name)
        paths[name].write_text(code)
    try:
        loss = load_module(LOSS_MODULE, paths["keras_dml/losses/toy_hinge.py"])
        tests = load_module("toy_hinge_tests", paths["tests/losses/test_toy_hinge.py"])
        yield types.SimpleNamespace(loss=loss, tests=tests)
    finally:
        for name in (LOSS_MODULE, "toy_hinge_tests"):
            sys.modules.pop(name, None)
        if "toy_hinge" in list_losses():
            LOSSES.unregister("toy_hinge")
        keras.saving.get_custom_objects().pop("keras_dml>ToyHingeLoss", None)


def test_the_recipe_is_a_loss_file_and_its_test_file():
    assert sorted(recipe_files()) == [
        "keras_dml/losses/toy_hinge.py",
        "tests/losses/test_toy_hinge.py",
    ]


def test_the_loss_registers_passes_its_tests_trains_and_unregisters(tmp_path):
    with recipe_loss(tmp_path) as recipe:
        assert "toy_hinge" in list_losses()
        assert "toy_hinge" in keras_dml_cli.catalogue.build()["losses"]  # what the command writes
        for name in sorted(vars(recipe.tests)):
            if name.startswith("test_"):
                getattr(recipe.tests, name)()
        history, model = train_one_epoch(tmp_path)
    assert np.isfinite(history["loss"][0])
    assert type(model.loss).__name__ == "ToyHingeLoss"
    assert "toy_hinge" not in list_losses() and LOSS_MODULE not in sys.modules


def train_one_epoch(tmp_path):
    """`(history, model)` of the baseline trained one epoch with the recipe's loss."""
    config = {
        "method": "baseline",
        "dataset": "arrays",
        "backbone": {"name": "convnet", "width": 8},
        "model": {"embedding_dim": 8},
        "loss": {"name": "toy_hinge", "margin": 0.3},
        "epochs": 1,
        "batch_size": 6,
        "m_per_class": 2,
    }
    result = train(config, str(tmp_path / "run"), verbose=0, splits=colour_splits(), report=False)
    return result["history"], result["model"]
