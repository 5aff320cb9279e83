"""The run configuration moved under `keras_dml/training/`, a method's default hooks were renamed
for what they are; the old `keras_dml.models` paths still import, with a DeprecationWarning
naming the new place (issue 30)."""

import importlib
import sys

import pytest

from keras_dml.models import method_defaults
from keras_dml.training import run_config


@pytest.mark.parametrize(
    "old, new, name",
    [
        ("keras_dml.models.config", run_config, "resolve_config"),
        ("keras_dml.models.hooks", method_defaults, "compile_with_config"),
    ],
)
def test_old_module_path_warns_and_re_exports(old, new, name):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.__name__.replace(".", r"\.")):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(new, name)
