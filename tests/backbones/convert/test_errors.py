"""A state dict that does not fit is refused with one line naming the first mismatch."""

import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from keras_dml.backbones.convert import convert_state_dict  # noqa: E402
from tests.support import torch_reference_backbones as reference  # noqa: E402


@pytest.fixture(scope="module")
def googlenet_state():
    torch.manual_seed(0)
    state = reference.TorchvisionGoogLeNet().state_dict()
    return {key: value.numpy() for key, value in state.items()}


def _refusal(state):
    with pytest.raises(ValueError) as info:
        convert_state_dict("googlenet", "torchvision", state)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_missing_key_is_named(googlenet_state):
    state = dict(googlenet_state)
    del state["inception4e.branch3.1.bn.running_var"]
    message = _refusal(state)
    assert "lacks 'inception4e.branch3.1.bn.running_var'" in message
    assert "'inception_4e_5x5_bn'" in message


def test_unexpected_key_is_named(googlenet_state):
    state = {**googlenet_state, "inception4e.branch5.conv.weight": np.zeros((8, 8, 1, 1))}
    assert "Unexpected key 'inception4e.branch5.conv.weight'" in _refusal(state)


def test_wrong_shape_is_named(googlenet_state):
    # The Caffe 5x5 kernel where torchvision's GoogLeNet has a 3x3 one.
    state = {**googlenet_state, "inception3a.branch3.1.conv.weight": np.zeros((32, 16, 5, 5))}
    message = _refusal(state)
    assert "'inception3a.branch3.1.conv.weight' has shape (32, 16, 5, 5)" in message
    assert "needs (32, 16, 3, 3)" in message


def test_classifier_and_auxiliary_heads_are_optional(googlenet_state):
    features_only = {
        key: value
        for key, value in googlenet_state.items()
        if not key.startswith(("aux1.", "aux2.", "fc.")) and "num_batches" not in key
    }
    model = convert_state_dict("googlenet", "torchvision", features_only)
    kernel = model.get_layer("conv1_7x7_s2").get_weights()[0]
    np.testing.assert_array_equal(kernel[:, :, 2, 5], googlenet_state["conv1.conv.weight"][5, 2])


def test_pth_file_without_torch_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "googlenet.pth"
    path.write_bytes(b"not read")
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"needs torch .*pip install torch") as info:
        convert_state_dict("googlenet", "torchvision", str(path))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("googlenet", "bninception"), "No conversion of backbone 'googlenet' from 'bninception'"),
        (("resnet50", "torchvision", {}, "r.h5"), "ending in '.weights.h5'"),
        (("resnet50", "torchvision", [1, 2]), "Expected a PyTorch state dict"),
    ],
)
def test_bad_arguments(args, match):
    backbone, source, *rest = args
    state = rest[0] if rest else {}
    output = rest[1] if len(rest) > 1 else None
    with pytest.raises(ValueError, match=match):
        convert_state_dict(backbone, source, state, output=output)
