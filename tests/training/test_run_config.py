"""`RunConfig`: the typed run configuration, built once, serialised back to `config.json`."""

import dataclasses
import glob
import json
import os

import keras
import pytest

from keras_dml.training import RunConfig, train
from keras_dml.training import run as run_module
from keras_dml.training.run_config import DEFAULTS, KNOWN_KEYS
from keras_dml_cli import build_parser
from keras_dml_cli.run.train import config_from_args
from tests.support.paths import REFERENCE_DIR

SAVED = sorted(glob.glob(os.path.join(REFERENCE_DIR, "saved_run_configs", "*.json")))
BASE = {"method": "baseline", "dataset": "digits"}


def test_one_documented_field_per_schema_key():
    fields = {field.name for field in dataclasses.fields(RunConfig)}
    assert fields == KNOWN_KEYS == set(DEFAULTS) | {"method", "dataset", "description", "paper"}
    documented = RunConfig.__doc__.split("Args:")[1].split("Examples:")[0]
    assert all(f"\n        {name}:" in documented for name in fields)


def test_defaults_are_filled_and_nested_entries_merged():
    config = RunConfig.from_dict(
        {**BASE, "backbone": "convnet", "optimizer": {"learning_rate": 0.01}}
    )
    assert config.backbone == {"name": "convnet", "weights": None, "freeze_batchnorm": False}
    assert config.optimizer == {"name": "adam", "learning_rate": 0.01}
    assert (config.epochs, config.batch_size, config.loss) == (10, None, None)
    assert "description" not in config.to_dict()  # recipe metadata only when set


@pytest.mark.parametrize("path", SAVED, ids=os.path.basename)
def test_a_config_json_written_before_run_config_loads_unchanged(path, tmp_path):
    with open(path) as f:
        saved = json.load(f)
    config = RunConfig.from_json(path)
    assert config.to_dict() == saved
    config.to_json(str(tmp_path / "config.json"))
    assert json.loads((tmp_path / "config.json").read_text()) == saved


@pytest.mark.parametrize(
    "entries, message",
    [
        (
            {"learning_rat": 0.1},
            "Unknown run-configuration key 'learning_rat'. Did you mean 'optimizer.learning_rate'?",
        ),
        ({"epoch": 3}, "Unknown run-configuration key 'epoch'. Did you mean 'epochs'?"),
        (
            {"optimizer": {"learning_rat": 0.1}},
            "Unknown run-configuration key 'optimizer.learning_rat'. Did you mean "
            "'optimizer.learning_rate'?",
        ),
        (
            {"optimizer": {"name": "sgd", "momentun": 0.9}},
            "Unknown run-configuration key 'optimizer.momentun'. Did you mean "
            "'optimizer.momentum'?",
        ),
        (
            {"backbone": {"name": "convnet", "widht": 32}},
            "Unknown run-configuration key 'backbone.widht'. Did you mean 'backbone.width'?",
        ),
        ({"backbone": "convnt"}, "Unknown backbone 'convnt'. Did you mean 'convnet'?"),
    ],
)
def test_unknown_key_is_one_line_with_the_closest_key(entries, message):
    with pytest.raises(ValueError) as error:
        RunConfig.from_dict({**BASE, **entries})
    text = str(error.value)
    assert text.startswith(message) and "\n" not in text


def test_a_backbones_own_options_and_an_optimizers_arguments_are_accepted():
    config = RunConfig.from_dict(
        {
            **BASE,
            "backbone": {"name": "convnet", "width": 16, "batchnorm_momentum": 0.99},
            "optimizer": {"name": "sgd", "momentum": 0.9, "lr_multipliers": {"head": 10.0}},
        }
    )
    assert config.backbone["width"] == 16 and config.optimizer["momentum"] == 0.9


def test_read_access_by_key_gives_a_copy():
    config = RunConfig.from_dict({**BASE, "model": {"embedding_dim": 8}})
    config["model"]["embedding_dim"] = 99
    assert config["model"] == {"embedding_dim": 8} and config.get("nothing", 1) == 1
    with pytest.raises(KeyError, match="not a run-configuration key"):
        config["epoch"]


def test_cli_builds_the_configuration_once(tmp_path, monkeypatch):
    path = tmp_path / "recipe.json"
    path.write_text(json.dumps({**BASE, "epochs": 3, "model": {"embedding_dim": 8}}))
    calls = []
    from_dict = RunConfig.from_dict.__func__
    monkeypatch.setattr(
        RunConfig, "from_dict", classmethod(lambda cls, d: calls.append(d) or from_dict(cls, d))
    )
    args = build_parser().parse_args(
        ["train", "--config", str(path), "--num-learners", "2", "--set", "seed=4"]
        + ["--output", "x"]
    )
    config = config_from_args(args)
    assert isinstance(config, RunConfig) and len(calls) == 1
    assert (config.epochs, config.seed, config.model) == (
        3,
        4,
        {"embedding_dim": 8, "num_learners": 2},
    )


def test_train_reads_the_run_config_it_is_given(tmp_path, monkeypatch):
    config = RunConfig.from_dict({**BASE, "epochs": 1})
    seen = []

    def stop(config, *args):
        seen.append(config)
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "_train", stop)
    with pytest.raises(KeyboardInterrupt):
        train(config, str(tmp_path), verbose=0, report=False)
    assert seen == [config]


def test_a_run_saved_before_run_config_trains_again_with_the_same_config_json(tmp_path):
    path = [p for p in SAVED if p.endswith("baseline_proxy_anchor_digits.json")][0]
    with open(path) as f:
        saved = json.load(f)
    keras.utils.set_random_seed(0)
    result = train(saved, str(tmp_path), verbose=0, report=False)
    assert json.loads((tmp_path / "config.json").read_text()) == saved
    assert 0.0 <= result["metrics"]["recall@1"] <= 1.0
