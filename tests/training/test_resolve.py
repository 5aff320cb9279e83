"""`resolve_run` fills every default and fitted value once; `config.json` is exactly what ran."""

import json

import keras
import pytest

from keras_dml.data import load_dataset
from keras_dml.methods import get_method, list_methods
from keras_dml.training import RunConfig, load_splits, resolve_run, train
from keras_dml_cli import main

TINY = {
    "dataset": "digits",
    "backbone": {"name": "convnet"},
    "epochs": 1,
    "model": {"embedding_dim": 16},
}


@pytest.fixture(scope="module")
def splits():
    return load_splits(RunConfig.from_dict({"method": "baseline", **TINY}))


@pytest.mark.parametrize("method", ["baseline", "dc", "hdc", "bier", "abe", "dcml"])
def test_resolving_fills_every_fitted_value_and_a_resolved_config_is_a_fixed_point(method, splits):
    entries = {"method": method, **TINY}
    if method == "dcml":
        entries["model"] = {"learner_dim": 8}
    config = resolve_run(entries, splits)
    assert (config.batch_size, config.m_per_class) == (64, 16)
    spec = get_method(method)
    fields = set(spec.options.__dataclass_fields__)
    assert set(config.method_options) == fields
    assert config.loss == (spec.default_loss and {**spec.default_loss, **config.loss})
    if spec.classes_per_learner:
        assert config.model[spec.learners_option] == 2  # 4 digits train classes, 2 per learner
    assert resolve_run(config, splits) == config
    assert resolve_run(json.loads(config.to_json()), splits) == config


def test_class_losses_get_their_class_count_and_recommended_multipliers(splits):
    config = resolve_run({"method": "baseline", **TINY, "loss": {"name": "proxy_anchor"}}, splits)
    assert config.loss == {"name": "proxy_anchor", "num_classes": splits["train"].num_classes}
    assert config.optimizer["lr_multipliers"] == {"proxies$": 100.0}


def test_every_method_declares_its_default_loss_or_owns_one():
    owners = {"abe", "mheads"}  # the model's own contrastive loss (ABE, Eq. 10)
    for name in list_methods():
        assert (get_method(name).default_loss is None) == (name in owners), name


def test_config_json_reproduces_the_run_from_another_folder(tmp_path):
    """`train` writes the resolved configuration; `keras-dml train --config RUN/config.json
    --output OTHER` and `train()` given that file end with the same metrics."""
    keras.utils.set_random_seed(0)
    first = train({"method": "dc", **TINY}, str(tmp_path / "a"), verbose=0, report=False)
    saved = tmp_path / "a" / "config.json"
    written = json.loads(saved.read_text())
    assert (written["batch_size"], written["loss"]) == (64, {"name": "margin"})  # resolved
    assert written["model"]["num_learners"] == 2 and "recluster_every" in written["method_options"]
    argv = ["train", "--config", str(saved), "--output", str(tmp_path / "b"), "--quiet"]
    assert main([*argv, "--no-report"]) == 0
    again = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert json.loads((tmp_path / "b" / "config.json").read_text()) == json.loads(saved.read_text())
    for key in ("recall@1", "map@r", "nmi"):
        assert again[key] == pytest.approx(first["metrics"][key], abs=1e-6), key
    third = train(json.loads(saved.read_text()), str(tmp_path / "c"), verbose=0, report=False)
    assert third["metrics"]["map@r"] == pytest.approx(first["metrics"]["map@r"], abs=1e-6)


def test_a_model_argument_the_method_does_not_take_is_refused_in_one_line(tmp_path, capsys):
    argv = ["train", "--method", "dcml", "--dataset", "digits", "--embedding-dim", "64"]
    argv += ["--backbone", "convnet"]
    assert main([*argv, "--epochs", "1", "--output", str(tmp_path), "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "embedding_dim" in err and "learner_dim" in err, err
    assert load_dataset  # the refusal comes before training


def test_a_misspelt_model_argument_is_refused_before_anything_is_built(splits):
    with pytest.raises(ValueError, match=r"\['embeding_dim'\].*Did you mean 'embedding_dim'"):
        resolve_run({"method": "dc", **TINY, "model": {"embeding_dim": 8}}, splits)
