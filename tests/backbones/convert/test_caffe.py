"""The original Caffe GoogLeNet converts from its `.caffemodel` exactly.

A seeded random `CaffeGoogLeNet` (tests/support/torch_reference_backbones.py: conv + ReLU, ceil-mode
max pooling, Caffe's LRN) is written as a V1 `.caffemodel` with legacy 4-D blob shapes, as
`bvlc_googlenet.caffemodel` is, plus a classifier the conversion must ignore. The converted
Keras backbone, fed raw RGB pixels, must match the module fed BGR pixels minus bvlc_googlenet's
mean (104, 117, 123) to 1e-4 of the features' scale. Runs on every backend. A file with a
missing layer, an unknown layer or a wrong shape is refused with one line naming it.
"""

import os

import keras
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from keras_dml import backbones  # noqa: E402
from keras_dml.backbones.convert import convert_state_dict  # noqa: E402
from keras_dml.backbones.weights_metadata import read_weights_metadata  # noqa: E402
from keras_dml_cli import main  # noqa: E402
from tests.support import torch_reference_backbones as reference  # noqa: E402
from tests.support.caffemodel_encoder import write_caffemodel  # noqa: E402

SIZE = 64
CLASSIFIER = {"loss3/classifier": [np.ones((10, 1024), "float32"), np.zeros(10, "float32")]}


@pytest.fixture(scope="module")
def caffe_module():
    torch.manual_seed(0)
    return reference.CaffeGoogLeNet().eval()


@pytest.fixture(scope="module")
def caffe_layers(caffe_module):
    return {"data": [], **caffe_module.caffe_layers(), **CLASSIFIER}


def test_converted_caffemodel_matches_the_caffe_network(caffe_module, caffe_layers, tmp_path):
    path = write_caffemodel(
        tmp_path / "bvlc_googlenet.caffemodel", caffe_layers, v1=True, legacy_shape=True
    )
    output = os.fspath(tmp_path / "googlenet_caffe_imagenet.weights.h5")

    model = convert_state_dict("googlenet", "caffe", path, output=output)

    pixels = np.random.default_rng(0).uniform(0, 255, (2, SIZE, SIZE, 3)).astype("float32")
    images = reference.caffe_googlenet_preprocess(torch.from_numpy(pixels).permute(0, 3, 1, 2))
    with torch.no_grad():
        expected = caffe_module.features(images).permute(0, 2, 3, 1).numpy()
        conv1 = caffe_module.convs["conv1/7x7_s2"](images).relu().permute(0, 2, 3, 1).numpy()
    # The first stage too: random weights damp a wrong input mean (the VGG means 103.939,
    # 116.779, 123.68 instead of 104, 117, 123) to 5e-5 of the final features' scale.
    both = keras.Model(model.input, [model.get_layer("conv1").output, model.output])
    stem, features = both.predict(pixels, verbose=0)  # one compiled graph: fast on JAX too
    assert features.shape == expected.shape == (2, 2, 2, 1024)
    assert np.abs(features - expected).max() <= 1e-4 * np.abs(expected).max()
    assert np.abs(stem - conv1).max() <= 1e-4 * np.abs(conv1).max()
    record = read_weights_metadata(output)
    assert (record["backbone"], record["source"], record["options"]) == (
        "googlenet",
        "caffe",
        {"variant": "caffe"},
    )


def _refusal(layers, tmp_path):
    path = write_caffemodel(tmp_path / "net.caffemodel", layers)
    with pytest.raises(ValueError) as info:
        convert_state_dict("googlenet", "caffe", path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_layer_is_named(caffe_layers, tmp_path):
    layers = {k: v for k, v in caffe_layers.items() if k != "inception_4e/5x5"}
    message = _refusal(layers, tmp_path)
    assert "lacks 'inception_4e/5x5.weight' (weights of Keras layer 'inception_4e_5x5')" in message
    assert "Caffe bvlc_googlenet" in message


def test_unknown_layer_is_named(caffe_layers, tmp_path):
    layers = {**caffe_layers, "inception_4e/7x7": [np.zeros((8, 8, 1, 1), "float32")]}
    assert "Unexpected key 'inception_4e/7x7.weight'" in _refusal(layers, tmp_path)


def test_wrong_shape_is_named(caffe_layers, tmp_path):
    # torchvision's 3x3 kernel where the Caffe network has its 5x5 one.
    bias = caffe_layers["inception_3a/5x5"][1]
    layers = {**caffe_layers, "inception_3a/5x5": [np.zeros((32, 16, 3, 3), "float32"), bias]}
    message = _refusal(layers, tmp_path)
    assert "'inception_3a/5x5.weight' has shape (32, 16, 3, 3)" in message
    assert "needs (32, 16, 5, 5)" in message


def test_convert_command_builds_the_caffe_variant(caffe_layers, tmp_path, capsys):
    path = write_caffemodel(tmp_path / "bvlc_googlenet.caffemodel", caffe_layers)
    output = os.fspath(tmp_path / "googlenet_caffe.weights.h5")
    argv = ["backbones", "convert", "--backbone", "googlenet", "--from", "caffe"]
    assert main([*argv, "--state-dict", os.fspath(path), "--output", output]) == 0
    assert "(builds, variant='caffe')" in capsys.readouterr().out

    model = backbones.get("googlenet", weights=output, input_shape=(SIZE, SIZE, 3))
    kernel = model.get_layer("conv1_7x7_s2").get_weights()[0]
    np.testing.assert_array_equal(kernel[:, :, 0, 5], caffe_layers["conv1/7x7_s2"][0][5, 0])
    assert model.get_layer("image_normalization").get_config()["reverse_channels"] is True
