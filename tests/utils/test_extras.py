"""The `pip install` a missing-dependency error names brings that dependency (pyproject.toml)."""

import os
import re
import sys

import pytest

from keras_dml.utils import MissingDependencyError, optional_import
from keras_dml.utils.imports import _EXTRAS
from tests.support.paths import REPO_ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")


def extras():
    with open(os.path.join(REPO_ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


def packages(extra, table=None):
    """The distribution names an extra installs, its `keras-dml[...]` extras included."""
    table = table or extras()
    names = set()
    for requirement in table[extra]:
        included = re.match(r"keras-dml\[([\w,-]+)\]", requirement)
        if included:
            for name in included.group(1).split(","):
                names |= packages(name, table)
        else:
            names.add(re.match(r"[\w.-]+", requirement).group(0).lower().split("[")[0])
    return names


@pytest.mark.parametrize("module", sorted(_EXTRAS))
def test_the_extra_an_error_names_installs_the_package(module):
    extra, package = _EXTRAS[module]
    assert extra in extras(), f"{module}: pyproject.toml has no extra {extra!r}"
    assert package.split("[")[0] in packages(extra), f"{module}: [{extra}] lacks {package}"


def test_the_onnx_extra_brings_the_pytorch_exporter_without_tf2onnx_or_tensorflow():
    onnx = packages("onnx")
    assert {"onnx", "onnxruntime", "onnxscript"} <= onnx, onnx
    assert not onnx & {"tf2onnx", "tensorflow", "tensorflow-cpu"}, onnx
    assert "tf2onnx" in packages("onnx-tensorflow")


def test_a_missing_tf2onnx_names_the_onnx_tensorflow_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "tf2onnx", None)
    with pytest.raises(MissingDependencyError) as error:
        optional_import("tf2onnx", feature="ONNX export")
    assert 'pip install "keras-dml[onnx-tensorflow]" (or pip install tf2onnx)' in str(error.value)
