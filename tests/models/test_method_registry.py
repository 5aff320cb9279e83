"""The method registry: built-ins register on import, user methods plug in without edits.

A toy method written into a temporary module trains through `keras_dml.training.train` and the
CLI (`--plugin`), shows in `keras-dml train --help`, and, installed as a `keras_dml.methods` entry
point, is covered by the parametrised export parity test.
"""

import dataclasses
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import keras_dml
import keras_dml_cli as cli
from keras_dml.data.datasets import from_arrays
from keras_dml.methods import get_method, list_methods, register_method
from keras_dml.methods.registry import unregister_method
from keras_dml.training import train
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
TOY = "toy_linear"
TOY_MODULE = textwrap.dedent(
    '''
    """A user's method: one linear embedding whose dimension comes from method_options."""

    import dataclasses

    from keras_dml.methods import register_method
    from keras_dml.models import EmbeddingModel


    @dataclasses.dataclass(frozen=True)
    class ToyOptions:
        width: int = 8


    def build_toy(config, backbone, splits):
        options = get_method("toy_linear").parse_options(config)
        return EmbeddingModel(backbone, embedding_dim=options.width)


    @register_method(
        "toy_linear",
        description="toy: one linear embedding (a plug-in written in a test)",
        options=ToyOptions,
        model=EmbeddingModel,
        tiny={"embedding_dim": 6},
    )
    def build(config, backbone, splits):
        return build_toy(config, backbone, splits)


    from keras_dml.methods import get_method  # noqa: E402
    '''
)


@pytest.fixture
def toy_module(tmp_path, monkeypatch):
    """`toy_dml_method.py` in a temporary folder on sys.path; unregistered afterwards."""
    (tmp_path / "toy_dml_method.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "toy_dml_method"
    sys.modules.pop("toy_dml_method", None)
    if TOY in list_methods():
        unregister_method(TOY)


def digit_splits(n_per_class=12):
    """Train / val / test `ImageDataset`s of sklearn digits (32 px RGB) held in memory."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    keep = np.concatenate([np.flatnonzero(digits.target == c)[:n_per_class] for c in range(10)])
    images = np.kron(digits.images[keep] * (255.0 / 16.0), np.ones((1, 4, 4)))
    images = np.repeat(images[..., None], 3, axis=-1).round().astype(np.uint8)
    labels = digits.target[keep]
    return {
        split: from_arrays(images, labels, split=split, test_fraction=0.3, val_fraction=0.3, seed=0)
        for split in ("train", "val", "test")
    }


def toy_config(**overrides):
    return {
        "method": TOY,
        "dataset": "digits",
        "epochs": 1,
        "batch_size": 16,
        "m_per_class": 4,
        "eval_every": 1,
        **overrides,
    }


def test_import_keras_dml_registers_every_method_and_loads_every_model_file(tmp_path):
    """`import keras_dml` alone registers the built-in methods, and `keras.saving.load_model`
    reads a keras-dml `.keras` file with no other keras_dml import."""
    from keras_dml.methods import get_method
    from keras_dml.models import DivideAndConquer

    backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    get_method("dc").tiny_model(backbone).save(tmp_path / "dc.keras")
    script = (
        "import sys, keras, keras_dml\n"
        f"model = keras.saving.load_model({str(tmp_path / 'dc.keras')!r}, safe_mode=True)\n"
        "print(type(model).__name__, ','.join(keras_dml.methods.list_methods()))\n"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": ROOT}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    kind, names = result.stdout.strip().splitlines()[-1].split(" ")
    assert kind == DivideAndConquer.__name__
    assert {"abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads"} <= set(names.split(","))


def test_unknown_names_and_options_fail_with_the_fix():
    with pytest.raises(ValueError, match="Did you mean 'dcml'"):
        get_method("dcm")
    with pytest.raises(
        ValueError, match=r"Unknown method_options \['recluster'\].*recluster_every"
    ):
        get_method("dc").parse_options({"method_options": {"recluster": 2}})
    assert get_method("dc").parse_options({"method_options": {}}).recluster_every == 2
    with pytest.raises(ValueError, match="registered already"):
        register_method("dc", description="again")(lambda config, backbone, splits: None)
    with pytest.raises(ValueError, match="description"):
        register_method("nameless")(lambda config, backbone, splits: None)
    assert "nameless" not in list_methods()


def test_every_method_spec_is_complete():
    for name in list_methods():
        spec = get_method(name)
        assert spec.name == name and spec.description and spec.tiny is not None
        assert dataclasses.is_dataclass(spec.parse_options({}))


def test_user_method_trains_through_train_and_checks_its_options(toy_module, tmp_path):
    import importlib

    importlib.import_module(toy_module)
    assert TOY in list_methods()
    splits = digit_splits()
    result = train(toy_config(method_options={"width": 5}), str(tmp_path / "run"), 0, (), splits)
    assert result["model"].learner_dims == (5,)
    assert 0.0 < result["metrics"]["recall@1"] <= 1.0
    with pytest.raises(ValueError, match=r"Unknown method_options \['depth'\].*width"):
        train(toy_config(method_options={"depth": 2}), str(tmp_path / "bad"), 0, (), splits)


def test_user_method_trains_through_the_cli_plugin_and_shows_in_help(toy_module, tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--plugin", toy_module, "--help"])
    help_text = capsys.readouterr().out
    assert "toy_linear" in help_text and "a plug-in written in a test" in help_text
    assert "dcml" in help_text
    output = tmp_path / "cli_run"
    code = cli.main(
        ["train", "--plugin", toy_module, "--method", TOY, "--dataset", "digits"]
        + ["--epochs", "1", "--batch-size", "32", "--m-per-class", "8"]
        + ["--output", str(output), "--quiet"]
    )
    assert code == 0
    assert json.loads((output / "config.json").read_text())["method"] == TOY
    assert (output / "model.keras").is_file()
    assert cli.main(["train", "--plugin", "no_such_plugin_module", "--output", "x"]) == 1
    assert "no_such_plugin_module" in capsys.readouterr().err


@pytest.mark.tf_only("the export parity test exports SavedModel / ONNX through TensorFlow")
def test_entry_point_method_is_covered_by_the_export_parity_test(tmp_path):
    """Installed as a `keras_dml.methods` entry point, the toy joins the parity families."""
    (tmp_path / "toy_dml_method.py").write_text(TOY_MODULE)
    dist = tmp_path / "toy_dml_method-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-dml-method\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[keras_dml.methods]\ntoy_linear = toy_dml_method\n")
    env = {
        **os.environ,
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "PYTHONPATH": os.pathsep.join([str(tmp_path), ROOT]),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        + ["tests/export/test_parity.py", "-k", TOY, "-rA"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    passed = [line for line in result.stdout.splitlines() if line.startswith("PASSED")]
    assert len(passed) == 5 and all(TOY in line for line in passed), result.stdout[-3000:]


def test_hierarchical_divide_and_conquer_builds_from_in_memory_splits(tmp_path):
    """HDC counts the training split it is given; nothing is reloaded by name."""
    splits = digit_splits()
    spec = get_method("hdc")
    from keras_dml import backbones
    from tests.support.configs import config_dict

    config = config_dict({"method": "hdc", "dataset": "arrays", "model": {"max_learners": 2}})
    model = spec.build(config, backbones.get("convnet", input_shape=(32, 32, 3)), splits)
    assert model.num_train_samples == len(splits["train"].labels)
