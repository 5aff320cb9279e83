"""Converted PyTorch weights give the PyTorch module's final feature map.

Each source's module (tests/support/torch_reference_backbones.py: torchvision's GoogLeNet and
ResNet-50, the `bninception` port) is random-initialised with a seed, its BatchNorm statistics
set to non-trivial values, and saved with `torch.save`. The converted Keras backbone, fed raw
RGB pixels, must match the module fed the same image with its own preprocessing to 1e-4 of
the features' scale. Runs on every backend. (Loading the written file with
`get(name, weights=PATH)`: tests/backbones/test_imagenet_lookup.py.)
"""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from keras_dml import backbones  # noqa: E402
from keras_dml.backbones.convert import convert_state_dict  # noqa: E402
from keras_dml.backbones.weights_metadata import read_weights_metadata  # noqa: E402
from tests.support import torch_reference_backbones as reference  # noqa: E402

SIZE = 64
CASES = {
    "googlenet": ("torchvision", reference.TorchvisionGoogLeNet, reference.torchvision_preprocess),
    "resnet50": ("torchvision", reference.TorchvisionResNet50, reference.torchvision_preprocess),
    "bn_inception": ("bninception", reference.BNInceptionPort, reference.bninception_preprocess),
}


def _torch_features(module, pixels, preprocess):
    images = preprocess(torch.from_numpy(pixels).permute(0, 3, 1, 2))
    with torch.no_grad():
        return module.features(images).permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("name", ["bn_inception", "googlenet", "resnet50"])
def test_converted_backbone_matches_the_pytorch_module(name, tmp_path):
    source, module_class, preprocess = CASES[name]
    torch.manual_seed(0)
    module = module_class()
    pixels = np.random.default_rng(0).uniform(0, 255, (2, SIZE, SIZE, 3)).astype("float32")
    calibration = preprocess(torch.rand(4, 3, SIZE, SIZE) * 255)
    reference.randomize_batchnorm(module, calibration, seed=1)
    state_path = os.fspath(tmp_path / f"{name}.pth")
    torch.save(module.state_dict(), state_path)
    output = os.fspath(tmp_path / f"{name}.weights.h5")

    model = convert_state_dict(name, source, state_path, output=output)

    expected = _torch_features(module, pixels, preprocess)
    features = model.predict(pixels, verbose=0)  # one compiled graph: fast on JAX too
    scale = np.abs(expected).max()
    assert features.shape == expected.shape
    assert np.abs(features - expected).max() <= 1e-4 * scale
    record = read_weights_metadata(output)
    assert (record["backbone"], record["source"]) == (name, source)
    assert os.path.exists(f"{output}.sha256")


def test_resnet50_v15_strides_the_3x3_convolution():
    model = backbones.get("resnet50", input_shape=(64, 64, 3), variant="v1.5")
    assert model.get_layer("conv3_block1_1_conv").strides == (1, 1)
    assert model.get_layer("conv3_block1_2_conv").strides == (2, 2)
    assert model.get_layer("image_normalization").mode == "torch"
    assert backbones.split_points("resnet50")["conv4"] == "conv4_block6_out"
    model.get_layer("conv4_block6_out")
