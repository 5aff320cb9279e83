"""Files users have: DataParallel and training checkpoints convert; other files are refused."""

import os
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from keras_dml.backbones.convert import convert_state_dict  # noqa: E402
from keras_dml_cli import main  # noqa: E402
from tests.support import torch_reference_backbones as reference  # noqa: E402

EXPECTED = "as a PyTorch state dict of torchvision googlenet: "
ARGV = ["backbones", "convert", "--backbone", "googlenet", "--from", "torchvision"]


@pytest.fixture(scope="module")
def googlenet():
    torch.manual_seed(0)
    return reference.TorchvisionGoogLeNet()


def _first_kernel(model):
    return model.get_layer("conv1_7x7_s2").get_weights()[0][:, :, 2, 5]


def _convert(path):
    return convert_state_dict("googlenet", "torchvision", os.fspath(path))


def test_data_parallel_checkpoint_converts_without_its_prefix(googlenet, tmp_path):
    path = tmp_path / "dp.pth"
    state = torch.nn.DataParallel(googlenet).state_dict()
    assert next(iter(state)).startswith("module.")
    torch.save(state, path)

    with pytest.warns(
        UserWarning, match=r"starts with 'module\.' \(a model saved from DataParallel"
    ):
        model = _convert(path)
    expected = googlenet.state_dict()["conv1.conv.weight"][5, 2].numpy()
    np.testing.assert_array_equal(_first_kernel(model), expected)


@pytest.mark.parametrize(
    ("wrap", "entry"),
    [
        (lambda state: {"state_dict": state, "epoch": 90}, "['state_dict']"),
        (lambda state: {"model": state, "optimizer": {"state": {}}}, "['model']"),
        (lambda state: {"model": {"state_dict": state}, "epoch": 3}, "['model']['state_dict']"),
    ],
    ids=["state_dict", "model", "nested"],
)
def test_training_checkpoint_converts_its_state_dict(googlenet, tmp_path, wrap, entry):
    path = tmp_path / "checkpoint.pth"
    torch.save(wrap(googlenet.state_dict()), path)

    with pytest.warns(UserWarning, match="is a training checkpoint") as record:
        model = _convert(path)
    assert f"converting its {entry} entry" in str(record[0].message)
    expected = googlenet.state_dict()["conv1.conv.weight"][5, 2].numpy()
    np.testing.assert_array_equal(_first_kernel(model), expected)


def test_a_checkpoint_without_a_known_entry_names_its_entries():
    state = {"weights": {"conv1.weight": np.zeros(3)}, "epoch": 1}
    with pytest.raises(ValueError, match=r"its entries \['weights'\] are mappings") as info:
        convert_state_dict("googlenet", "torchvision", state)
    assert "\n" not in str(info.value)


def test_another_prefix_is_named(googlenet):
    state = {f"backbone.{key}": value for key, value in googlenet.state_dict().items()}
    state["head.weight"] = torch.zeros(8, 1024)
    with pytest.raises(ValueError) as info:
        convert_state_dict("googlenet", "torchvision", state)
    assert "It holds 'backbone.conv1.conv.weight': strip that prefix." in str(info.value)


def _write_empty(path):
    path.write_bytes(b"")


def _write_text(path):
    path.write_text("https://download.pytorch.org/models/googlenet-1378be20.pth\n")


def _write_pickled_list(path):
    with open(path, "wb") as handle:
        pickle.dump([1, 2, 3], handle)


def _write_truncated(path):
    torch.save({"conv1.weight": torch.zeros(64, 3, 7, 7)}, path)
    path.write_bytes(path.read_bytes()[:300])


def _write_whole_module(path):
    torch.save(torch.nn.Linear(2, 2), path)


def _write_saved_list(path):
    torch.save([torch.zeros(2)], path)


@pytest.mark.parametrize(
    ("write", "reason"),
    [
        (_write_empty, "the file is empty (0 bytes)."),
        (_write_text, "it is not a file `torch.save` wrote, or it is corrupt"),
        (_write_pickled_list, "it is not a file `torch.save` wrote, or it is corrupt"),
        (_write_truncated, "it is not a file `torch.save` wrote, or it is corrupt"),
        (_write_whole_module, "save `model.state_dict()` instead."),
        (_write_saved_list, "Received: list."),
    ],
    ids=["empty", "text", "pickled_list", "truncated", "whole_module", "saved_list"],
)
def test_a_file_without_a_state_dict_is_refused_in_one_line(tmp_path, write, reason):
    path = tmp_path / "weights.pth"
    write(path)
    with pytest.raises(ValueError) as info:
        _convert(path)
    message = str(info.value)
    assert "\n" not in message
    assert repr(os.fspath(path)) in message
    assert "a PyTorch state dict of torchvision googlenet" in message
    assert reason in message


def test_cli_converts_a_data_parallel_training_checkpoint(googlenet, tmp_path, capsys):
    path = os.fspath(tmp_path / "checkpoint.pth")
    torch.save({"state_dict": torch.nn.DataParallel(googlenet).state_dict(), "epoch": 3}, path)
    output = os.fspath(tmp_path / "googlenet.weights.h5")

    assert main([*ARGV, "--state-dict", path, "--output", output]) == 0
    captured = capsys.readouterr()
    notes = captured.err.strip().splitlines()
    assert notes == [
        f"keras-dml: warning: {path!r} is a training checkpoint: converting its ['state_dict'] "
        "entry.",
        f"keras-dml: warning: Every key of {path!r} starts with 'module.' (a model saved from "
        "DataParallel, DistributedDataParallel or torch.compile): converting them without it.",
    ]
    assert f"Wrote {output}" in captured.out


@pytest.mark.parametrize(("source", "name"), [("torchvision", "x.pth"), ("caffe", "x.caffemodel")])
def test_cli_refuses_a_corrupt_file_in_one_line(tmp_path, capsys, source, name):
    path = os.fspath(tmp_path / name)
    with open(path, "wb") as handle:
        handle.write(b"\x80\x02corrupt")
    argv = ["backbones", "convert", "--backbone", "googlenet", "--from", source]
    output = os.fspath(tmp_path / "out.weights.h5")

    assert main([*argv, "--state-dict", path, "--output", output]) == 1
    error = capsys.readouterr().err.strip()
    assert "\n" not in error
    expected = EXPECTED if source == "torchvision" else "is not a Caffe .caffemodel"
    assert error.startswith("keras-dml: error: ") and f"{path!r}" in error and expected in error
    assert not os.path.exists(output)
