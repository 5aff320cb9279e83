"""`keras-dml backbones convert`: writes the weights file and its sha256, or one error line."""

import os

import pytest

torch = pytest.importorskip("torch")

from keras_dml.zoo.integrity import sha256_file  # noqa: E402
from keras_dml_cli import main  # noqa: E402
from keras_dml_cli.catalogue import catalogue  # noqa: E402
from tests.support import torch_reference_backbones as reference  # noqa: E402


def test_convert_command(tmp_path, capsys):
    torch.manual_seed(0)
    state = reference.TorchvisionGoogLeNet().state_dict()
    state_path = os.fspath(tmp_path / "googlenet-1378be20.pth")
    torch.save(state, state_path)
    output = os.fspath(tmp_path / "out" / "googlenet.weights.h5")
    argv = ["backbones", "convert", "--backbone", "googlenet", "--from", "torchvision"]
    argv += ["--state-dict", state_path, "--output", output]

    assert main(argv) == 0
    with open(f"{output}.sha256") as handle:
        assert sha256_file(output) in handle.read()
    assert f"get('googlenet', weights={output!r}) (builds, variant='torchvision')" in (
        capsys.readouterr().out
    )

    del state["conv2.bn.running_mean"]
    torch.save(state, state_path)
    assert main(argv) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("keras-dml: error: The state dict lacks 'conv2.bn.running_mean'")
    assert "\n" not in error


def test_help_table_is_the_conversion_list():
    from keras_dml.backbones.convert import CONVERSIONS

    table = {}
    for conversion in CONVERSIONS:
        table.setdefault(conversion.backbone, []).append(conversion.source)
    assert table == catalogue()["backbone_conversions"]
