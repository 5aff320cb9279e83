"""A misspelt name or keyword anywhere suggests the right one, in the same words.

Losses, methods and backbones suggested a name, each in its own format; datasets printed a list;
optimizers, run-configuration keys, `method_options` keywords, augmentation, strategy and
precision suggested nothing. Every site now ends its one line with `Did you mean 'NAME'?`
(`keras_dml.utils.suggestions`).
"""

import json

import pytest

from keras_dml.utils.suggestions import closest, did_you_mean, did_you_mean_keys
from keras_dml_cli import main


def resolve(**entries):
    from tests.support.configs import config_dict

    return config_dict({"method": "baseline", "dataset": "digits", **entries})


def build_optimizer(**entry):
    from keras_dml.methods.defaults import build_optimizer

    return build_optimizer({"optimizer": entry})


def parse_dc_options(**options):
    from keras_dml.methods import get_method

    return get_method("dc").parse_options({"method_options": options})


def check_loss(**entry):
    from keras_dml.methods.defaults import check_loss_entry

    return check_loss_entry(entry)


def load(name, **options):
    from keras_dml.data import load_dataset

    return load_dataset(name, **options)


def backbone(name, **options):
    from keras_dml import backbones

    return backbones.get(name, input_shape=(32, 32, 3), **options)


def losses_get(name):
    from keras_dml import losses

    return losses.get(name)


def method(name):
    from keras_dml.methods import get_method

    return get_method(name)


def strategy(name):
    from keras_dml.training.strategy import check_strategy

    return check_strategy(name)


def precision(name):
    from keras_dml.training.precision import check_precision

    return check_precision(name)


CASES = {
    "losses.get": (lambda: losses_get("contrastiv"), "contrastive"),
    "loss entry name": (lambda: check_loss(name="contrastiv"), "contrastive"),
    "loss keyword": (lambda: check_loss(name="margin", marign=0.1), "margin"),
    "method": (lambda: method("basline"), "baseline"),
    "method_options keyword": (lambda: parse_dc_options(recluster_evry=2), "recluster_every"),
    "backbone": (lambda: backbone("convnett"), "convnet"),
    "backbone option": (lambda: backbone("convnet", widht=4), "width"),
    "optimizer": (lambda: build_optimizer(name="adamm"), "adam"),
    "optimizer keyword": (lambda: build_optimizer(name="sgd", momentun=0.9), "momentum"),
    "run-config key": (lambda: resolve(epoch=3), "epochs"),
    "augmentation": (lambda: resolve(augmentation="flp"), "flip"),
    "strategy value": (lambda: resolve(strategy="mirored"), "mirrored"),
    "precision value": (lambda: resolve(precision="mixed_float61"), "mixed_float16"),
    "strategy check": (lambda: strategy("mirored"), "mirrored"),
    "precision check": (lambda: precision("float23"), "float32"),
    "dataset": (lambda: load("digts"), "digits"),
    "dataset option": (lambda: load("digits", resize_sise=40), "resize_size"),
}


@pytest.mark.parametrize("site", sorted(CASES))
def test_a_misspelt_name_suggests_the_right_one(site):
    build, right = CASES[site]
    with pytest.raises(ValueError) as error:
        build()
    message = str(error.value)
    assert f"Did you mean {right!r}?" in message, message
    assert "\n" not in message


def one_error_line(capsys):
    err = capsys.readouterr().err.strip()
    lines = [line for line in err.splitlines() if line.startswith("keras-dml: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize(
    "flags",
    [
        ["--loss", "contrastiv"],
        ["--set", "loss=" + json.dumps({"name": "contrastiv"})],
        ["--set", "loss.name=contrastiv"],
    ],
)
def test_cli_misspelt_loss_suggests_the_right_one(flags, tmp_path, capsys):
    argv = ["train", "--method", "baseline", "--dataset", "digits", "--quiet", *flags]
    assert main([*argv, "--output", str(tmp_path / "run")]) == 1
    assert "Unknown loss 'contrastiv'. Did you mean 'contrastive'?" in one_error_line(capsys)
    assert not (tmp_path / "run" / "model.keras").exists()


def test_run_config_file_with_a_misspelt_loss(tmp_path, capsys):
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"method": "dc", "dataset": "digits", "loss": {"name": "tripet"}}))
    assert main(["train", "--config", str(config), "--output", str(tmp_path / "run")]) == 1
    assert "Did you mean 'triplet'?" in one_error_line(capsys)


def test_the_helper_ignores_case_and_dashes_and_keeps_the_known_spelling():
    assert closest("Proxy-NCA", ["proxy_nca", "proxy_anchor"]) == "proxy_nca"
    assert did_you_mean("zzz", ["margin"]) == ""
    assert (
        did_you_mean_keys(["marign", "zzz"], ["margin"]) == " Did you mean 'margin' for 'marign'?"
    )


def test_cli_misspelt_model_argument_suggests_the_right_one(tmp_path, capsys):
    # Used to end in Keras' "Unrecognized keyword arguments passed to EmbeddingModel: ...".
    argv = ["train", "--method", "baseline", "--dataset", "digits", "--quiet"]
    argv += ["--set", "model.embeding_dim=8", "--output", str(tmp_path / "run")]
    assert main(argv) == 1
    line = one_error_line(capsys)
    assert "['embeding_dim']" in line and "Did you mean 'embedding_dim'?" in line
    assert "`model` entry" in line


def test_model_argument_error_finds_the_method_model_class():
    from keras_dml.models import DivideAndConquer
    from keras_dml.training.model_arguments import model_argument_error

    try:
        DivideAndConquer(backbone("convnet", width=4), num_lerners=2)
    except ValueError as error:
        explained = model_argument_error(error, {"method": "dc", "model": {"num_lerners": 2}})
    assert "Did you mean 'num_learners'?" in str(explained)
    assert model_argument_error(ValueError("another error"), {}) is None
