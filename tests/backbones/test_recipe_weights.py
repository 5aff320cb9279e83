"""The paper recipes start from the converted ImageNet weights they name.

A recipe's `backbone.weights` object names the published file its weights must be converted
from, with that file's published digest. With the converted file in the Keras cache the
recipe's backbone is built from it; without it, one line gives the `keras-dml backbones
convert` command; a file converted from another source is refused in one line. The source is
a seeded random `CaffeGoogLeNet` (tests/support/torch_reference_backbones.py) written as a
`.caffemodel`, converted as a user would; the digest checks read only the conversion record,
so they use record-only files. Runs on every backend.
"""

import hashlib
import json
import os

import h5py
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from keras_dml import backbones  # noqa: E402
from keras_dml.backbones.convert import convert_state_dict  # noqa: E402
from keras_dml.backbones.imagenet_lookup import WEIGHTS_ENV, write_sha256  # noqa: E402
from keras_dml.backbones.weights import WeightsUnavailableError  # noqa: E402
from keras_dml.backbones.weights_metadata import (  # noqa: E402
    ATTRIBUTE,
    read_weights_metadata,
)
from keras_dml.utils.sha256 import sha256_file  # noqa: E402
from keras_dml_cli import main  # noqa: E402
from keras_dml_cli.parser import build_parser  # noqa: E402
from keras_dml_cli.run.train import config_from_args  # noqa: E402
from tests.support import torch_reference_backbones as reference  # noqa: E402
from tests.support.caffemodel_encoder import write_caffemodel  # noqa: E402
from tests.support.paths import REPO_ROOT  # noqa: E402

ABE_RECIPE = os.path.join(REPO_ROOT, "recipes", "configs", "abe_cub200.json")
DC_RECIPE = os.path.join(REPO_ROOT, "recipes", "configs", "dc_cub200.json")
CAFFE_FILE = "googlenet_caffe_imagenet.weights.h5"
RESNET_FILE = "resnet50_v1.5_imagenet.weights.h5"


@pytest.fixture(scope="module")
def keras_home(tmp_path_factory):
    return tmp_path_factory.mktemp("keras_home")


@pytest.fixture(autouse=True)
def cache_in(keras_home, monkeypatch):
    """The module's Keras home, no configured weights folder or mirror."""
    monkeypatch.setenv("KERAS_HOME", os.fspath(keras_home))
    monkeypatch.delenv(WEIGHTS_ENV, raising=False)


def _cache(keras_home):
    return keras_home / "keras_dml" / "backbones"


@pytest.fixture(scope="module")
def caffemodel(tmp_path_factory):
    """A seeded random bvlc_googlenet as a `.caffemodel`, with its sha1 and sha256."""
    torch.manual_seed(3)
    layers = {"data": [], **reference.CaffeGoogLeNet().caffe_layers()}
    path = tmp_path_factory.mktemp("download") / "bvlc_googlenet.caffemodel"
    write_caffemodel(path, layers, v1=True, legacy_shape=True)
    sha1 = hashlib.sha1(path.read_bytes(), usedforsecurity=False).hexdigest()
    return os.fspath(path), sha1, sha256_file(path)


@pytest.fixture(scope="module")
def converted(caffemodel, keras_home):
    """The caffemodel converted into the Keras cache; the converted backbone's weights."""
    output = _cache(keras_home) / CAFFE_FILE
    model = convert_state_dict("googlenet", "caffe", caffemodel[0], output=os.fspath(output))
    return os.fspath(output), [np.array(w) for w in model.get_weights()]


def _recipe_config(recipe, *overrides):
    """The run configuration `keras-dml train --config recipe --set ...` builds."""
    argv = ["train", "--config", recipe, "--output", "unused"]
    for override in overrides:
        argv += ["--set", override]
    return config_from_args(build_parser().parse_args(argv)).to_dict()


def _build_like_a_run(config):
    """The backbone call of `keras_dml.training.train` (training/run.py) for a configuration."""
    options = dict(config["backbone"])
    size = config["image_size"]
    return backbones.get(options.pop("name"), input_shape=(size, size, 3), **options)


def test_the_converter_records_the_digests_of_its_source_file(caffemodel, converted):
    path, sha1, sha256 = caffemodel
    source = read_weights_metadata(converted[0])["source_file"]
    assert source == {"name": "bvlc_googlenet.caffemodel", "sha1": sha1, "sha256": sha256}


def test_a_recipe_builds_its_backbone_from_the_converted_file(caffemodel, converted):
    # The recipe expects the BVLC file's published sha1; the test's file has its own.
    config = _recipe_config(ABE_RECIPE, f"backbone.weights.source_sha1={caffemodel[1]}")
    assert backbones.check_backbone_weights(config["backbone"]) == converted[0]
    model = _build_like_a_run(config)
    assert model.input_shape == (None, 224, 224, 3)
    assert type(model.get_layer("pool1")).__name__ == "LocalResponseNormalization"
    weights = model.get_weights()
    assert len(weights) == len(converted[1])
    for built, in_file in zip(weights, converted[1]):
        np.testing.assert_array_equal(built, in_file)


def test_weights_from_another_source_file_are_refused_in_one_line(converted):
    # The real recipe names bvlc_googlenet.caffemodel's published sha1, not the test file's.
    config = _recipe_config(ABE_RECIPE)
    with pytest.raises(WeightsUnavailableError) as raised:
        backbones.check_backbone_weights(config["backbone"])
    message = str(raised.value)
    assert "\n" not in message
    assert "expects bvlc_googlenet.caffemodel (sha1 405fc5acd08a3bb12de8ee5e23a96bec22f08204)" in (
        message
    )
    assert "keras-dml backbones convert --backbone googlenet --from caffe --state-dict " in message
    with pytest.raises(WeightsUnavailableError, match="expects bvlc_googlenet.caffemodel"):
        _build_like_a_run(config)


def test_without_the_converted_file_the_cli_run_stops_with_the_convert_command(
    tmp_path, monkeypatch, capsys
):
    home = tmp_path / "empty_home"
    monkeypatch.setenv("KERAS_HOME", os.fspath(home))
    # digits and a batch it can fill stand in for CUB-200 (not downloaded in tests).
    argv = ["train", "--config", DC_RECIPE, "--set", "dataset=digits", "--batch-size", "16"]
    argv += ["--m-per-class", "4", "--num-learners", "2", "--output", os.fspath(tmp_path / "run")]
    assert main(argv) == 1
    error = capsys.readouterr().err.strip()
    output = _cache(home) / RESNET_FILE
    assert error.startswith("keras-dml: error: No converted ImageNet weights for backbone")
    assert "\n" not in error
    assert (
        "download https://download.pytorch.org/models/resnet50-0676ba61.pth (sha256 "
        "0676ba61...) and run `keras-dml backbones convert --backbone resnet50 --from "
        f"torchvision --state-dict resnet50-0676ba61.pth --output {output}`."
    ) in error
    assert not (tmp_path / "run" / "model.keras").exists()
    assert not (tmp_path / "run" / "config.json").exists()  # stopped before the data loaded


def _record_only_file(folder, name, source_file):
    """A converted file reduced to its conversion record (the digest checks read nothing else)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    record = {"backbone": "resnet50", "options": {"variant": "v1.5"}, "source": "torchvision"}
    with h5py.File(path, "w") as handle:
        handle.attrs[ATTRIBUTE] = json.dumps({**record, "source_file": source_file})
    write_sha256(os.fspath(path))
    return os.fspath(path)


@pytest.mark.parametrize(
    "sha256, accepted",
    [
        ("0676ba61" + "0" * 56, True),
        ("0676ba62" + "0" * 56, False),
        ("f0676ba61" + "0" * 55, False),
    ],
)
def test_a_published_sha256_prefix_is_checked(tmp_path, monkeypatch, sha256, accepted):
    monkeypatch.setenv("KERAS_HOME", os.fspath(tmp_path))
    source = {"name": "resnet50-0676ba61.pth", "sha256": sha256, "sha1": "0" * 40}
    path = _record_only_file(_cache(tmp_path), RESNET_FILE, source)
    entry = _recipe_config(DC_RECIPE)["backbone"]
    if accepted:
        assert backbones.check_backbone_weights(entry) == path
        return
    with pytest.raises(WeightsUnavailableError) as raised:
        backbones.check_backbone_weights(entry)
    assert f"converted from 'resnet50-0676ba61.pth' (sha256 {sha256}), but the recipe " in str(
        raised.value
    )


def test_a_file_converted_without_a_source_record_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", os.fspath(tmp_path))
    _record_only_file(_cache(tmp_path), RESNET_FILE, None)
    with pytest.raises(WeightsUnavailableError, match="does not record which file it was conv"):
        backbones.check_backbone_weights(_recipe_config(DC_RECIPE)["backbone"])


@pytest.mark.parametrize(
    "weights, message",
    [
        ({"pretrained": "imagenet", "source_file": "r.pth"}, "without a digest"),
        ({"pretrained": "imagenet", "source_file": "r.pth", "source_sha256": "0676"}, "8 to 64"),
        ({"pretrained": "imagenet", "source_file": "r.pth", "source_sha1": "xyz12345"}, "hex"),
        ({"pretrained": "imagenet", "source_sha256": "0676ba61"}, "source_file` must name"),
        ({"pretrained": "imagenet", "file": "r.pth", "source_sha256": "0676ba61"}, "keys"),
        ({"pretrained": "places", "source_file": "r.pth", "source_sha256": "0676ba61"}, "keys"),
    ],
)
def test_an_invalid_weights_object_is_refused_in_one_line(weights, message):
    with pytest.raises(ValueError, match=message) as raised:
        backbones.check_backbone_weights(
            {"name": "resnet50", "variant": "v1.5", "weights": weights}
        )
    assert "\n" not in str(raised.value)


def test_a_weights_object_needs_a_converted_variant():
    weights = {"pretrained": "imagenet", "source_file": "r.pth", "source_sha256": "0676ba61"}
    with pytest.raises(ValueError, match="takes Keras' own ImageNet download"):
        backbones.get("resnet50", weights=weights, variant="v1")
