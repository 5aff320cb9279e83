"""A new ensemble method is one folder: CONTRIBUTING's `toy_method/` package, written into a
temporary folder, registers on import and trains through `keras_dml.training.train` and
`keras-dml train --plugin`. The files are read from CONTRIBUTING.md, so the
walk-through and this test cannot drift apart."""

import json
import os
import re
import shlex
import sys

import keras
import numpy as np
import pytest

import keras_dml_cli as cli
from keras_dml.methods import list_methods
from keras_dml.methods.registry import unregister_method
from keras_dml.training import train
from tests.support.helpers import colour_splits
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def contributing_section():
    with open(os.path.join(ROOT, "CONTRIBUTING.md")) as f:
        return f.read().split("## Adding a training method", 1)[1]


def method_folder_files():
    """`{relative path: code}` of the `py` blocks whose first line names their file."""
    blocks = re.findall(r"```py\n# (toy_method/\S+\.py)\n(.*?)```", contributing_section(), re.S)
    return dict(blocks)


@pytest.fixture
def toy_folder(tmp_path, monkeypatch):
    """The walk-through's folder on `sys.path`; the method is unregistered afterwards."""
    for path, code in method_folder_files().items():
        (tmp_path / path).parent.mkdir(exist_ok=True)
        (tmp_path / path).write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [name for name in sys.modules if name.split(".")[0] == "toy_method"]:
        del sys.modules[name]
    if "toy" in list_methods():
        unregister_method("toy")


def test_the_walk_through_is_one_folder_of_three_files():
    assert sorted(method_folder_files()) == [
        "toy_method/__init__.py",
        "toy_method/model.py",
        "toy_method/spec.py",
    ]


def test_the_folder_registers_on_import_and_trains_through_train(toy_folder):
    import toy_method  # noqa: F401 (the documented registration)

    assert "toy" in list_methods()
    config = {
        "method": "toy",
        "dataset": "arrays",
        "backbone": {"name": "convnet", "width": 8},
        "model": {"embedding_dim": 8},
        "method_options": {"head_dropout": 0.1},
        "epochs": 1,
        "batch_size": 6,
        "m_per_class": 2,
    }
    run_dir = toy_folder / "run"
    result = train(config, str(run_dir), verbose=0, splits=colour_splits(), report=False)
    assert np.isfinite(result["history"]["loss"][0])
    assert type(result["model"]).__name__ == "ToyEnsemble"
    assert result["model"].learner_dims == (4, 4)
    assert result["model"].dropout_layer.rate == 0.1  # the method option reached the model
    loaded = keras.saving.load_model(run_dir / "model.keras", safe_mode=True)
    assert type(loaded).__name__ == "ToyEnsemble"
    assert json.loads((run_dir / "config.json").read_text())["method"] == "toy"


def test_the_documented_command_line_trains_the_folder(toy_folder, monkeypatch):
    words = re.search(r"`(keras-dml train --plugin [^`]+)`", contributing_section()).group(1)
    bounds = ["--epochs", "1", "--set", "backbone.width=8", "--quiet", "--no-report"]
    argv = shlex.split(words)[1:] + bounds  # one epoch of a narrow backbone
    monkeypatch.chdir(toy_folder)
    assert cli.main(argv) == 0
    assert (toy_folder / "runs" / "toy" / "model.keras").is_file()
