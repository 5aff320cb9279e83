"""`weights="imagenet"` finds converted weights (configured folder or mirror, Keras cache),
checks their sha256, and otherwise says in one line how to convert them; a converted file
builds the variant it records."""

import os
import shutil
import urllib.request

import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.backbones.imagenet_lookup import WEIGHTS_ENV, write_sha256
from keras_dml.backbones.weights import WeightsUnavailableError
from keras_dml.backbones.weights_metadata import write_weights_metadata
from tests.support.helpers import tiny_images

SHAPE = (64, 64, 3)
FILE = "googlenet_torchvision_imagenet.weights.h5"


@pytest.fixture(autouse=True)
def offline_home(tmp_path, monkeypatch):
    """An empty Keras home, no configured mirror, and any network access fails the test."""
    monkeypatch.setenv("KERAS_HOME", os.fspath(tmp_path / "keras_home"))
    monkeypatch.delenv(WEIGHTS_ENV, raising=False)
    real_urlopen = urllib.request.urlopen

    def local_only(url, *args, **kwargs):
        target = getattr(url, "full_url", url)
        assert str(target).startswith("file:"), f"network access attempted: {target}"
        return real_urlopen(url, *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", local_only)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A googlenet "torchvision" weights file as `keras-dml backbones convert` writes it."""
    keras.utils.set_random_seed(5)
    model = backbones.get("googlenet", input_shape=SHAPE, variant="torchvision")
    path = os.fspath(tmp_path_factory.mktemp("converted") / FILE)
    model.save_weights(path)
    write_weights_metadata(path, "googlenet", {"variant": "torchvision"}, "torchvision")
    write_sha256(path)
    images = tiny_images(n=2, size=64)
    return path, images, model.predict(images, verbose=0)


def _install(converted, folder):
    os.makedirs(folder, exist_ok=True)
    for suffix in ("", ".sha256"):
        shutil.copy(converted[0] + suffix, os.path.join(folder, FILE + suffix))


def _assert_same_outputs(model, converted):
    _, images, expected = converted
    np.testing.assert_allclose(model.predict(images, verbose=0), expected, atol=1e-5)


def test_file_builds_the_variant_it_records(converted):
    model = backbones.get("googlenet", weights=converted[0], input_shape=SHAPE)
    assert model.get_layer("image_normalization").mode == "tf"
    _assert_same_outputs(model, converted)


def test_found_in_the_keras_cache(converted, tmp_path):
    _install(converted, tmp_path / "keras_home" / "keras_dml" / "backbones")
    model = backbones.get("googlenet", weights="imagenet", input_shape=SHAPE, variant="torchvision")
    _assert_same_outputs(model, converted)


def test_found_on_a_configured_mirror_and_cached(converted, tmp_path, monkeypatch):
    _install(converted, tmp_path / "mirror")
    monkeypatch.setenv(WEIGHTS_ENV, (tmp_path / "mirror").as_uri())
    model = backbones.get("googlenet", weights="imagenet", input_shape=SHAPE, variant="torchvision")
    _assert_same_outputs(model, converted)
    assert (tmp_path / "keras_home" / "keras_dml" / "backbones" / FILE).exists()


def test_sha256_mismatch_is_refused(converted, tmp_path, monkeypatch):
    folder = tmp_path / "weights"
    _install(converted, folder)
    (folder / f"{FILE}.sha256").write_text("0" * 64 + f"  {FILE}\n")
    monkeypatch.setenv(WEIGHTS_ENV, os.fspath(folder))
    mismatch = "sha256 .* is [0-9a-f]{64}, not 0{64}"
    with pytest.raises(WeightsUnavailableError, match=mismatch) as info:
        backbones.get("googlenet", weights="imagenet", input_shape=SHAPE, variant="torchvision")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "options", "command"),
    [
        ("resnet50", {"variant": "v1.5"}, "--backbone resnet50 --from torchvision"),
        ("googlenet", {"variant": "torchvision"}, "--backbone googlenet --from torchvision"),
        ("googlenet", {"variant": "caffe"}, "--backbone googlenet --from caffe"),
        ("bn_inception", {}, "--backbone bn_inception --from bninception"),
    ],
)
def test_missing_weights_say_how_to_convert_them(name, options, command, tmp_path):
    with pytest.raises(WeightsUnavailableError) as info:
        backbones.get(name, weights="imagenet", input_shape=SHAPE, **options)
    message = str(info.value)
    assert "\n" not in message
    cached = tmp_path / "keras_home" / "keras_dml" / "backbones"
    assert f"keras-dml backbones convert {command} --state-dict <downloaded file>" in message
    assert f"--output {cached}/{name}_" in message
    assert "download https://" in message or "download http://" in message


def test_file_for_another_backbone_or_variant_is_refused(converted):
    with pytest.raises(ValueError, match="converted for backbone 'googlenet', not 'resnet50'"):
        backbones.get("resnet50", weights=converted[0], input_shape=SHAPE)
    with pytest.raises(ValueError, match="variant='torchvision'.*variant='caffe' was requested"):
        backbones.get("googlenet", weights=converted[0], input_shape=SHAPE, variant="caffe")
