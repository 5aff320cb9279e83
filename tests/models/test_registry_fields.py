"""`MethodSpec` holds what building and training a method needs; the demo's entries and the zoo
cards' titles moved next to their readers, and old registrations still work (issue 30)."""

import dataclasses
import importlib.util
import os

import pytest

from keras_dml.cli.names import BUILTIN_METHODS
from keras_dml.demo.entries import DEMO_ENTRIES
from keras_dml.demo.run import demo_config, demo_methods
from keras_dml.methods import MethodSpec, list_methods, register_method, unregister_method
from keras_dml.models import EmbeddingModel
from keras_dml.zoo.method_titles import METHOD_TITLES
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def publish_zoo():
    path = os.path.join(ROOT, "training", "publish_zoo.py")
    spec = importlib.util.spec_from_file_location("publish_zoo", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_plain(config, backbone, splits):
    return EmbeddingModel(backbone, **config["model"])


@pytest.fixture
def registered():
    names = []
    yield names
    for name in names:
        if name in list_methods():
            unregister_method(name)


def test_method_spec_has_no_demo_or_title_field():
    fields = {field.name for field in dataclasses.fields(MethodSpec)}
    assert not fields & {"demo", "title"}


def test_every_built_in_method_has_its_zoo_title_and_the_demo_its_entries():
    assert set(METHOD_TITLES) == set(BUILTIN_METHODS)
    assert set(demo_methods()) == set(DEMO_ENTRIES)
    assert list(demo_methods())[0] == "baseline"
    assert demo_config("bier")["loss"] == {"name": "binomial_deviance"}


def test_a_plug_in_joins_the_demo_through_its_entry_and_gets_its_description_as_title(
    registered, monkeypatch
):
    register_method("plug", description="a plug-in method")(build_plain)
    registered.append("plug")
    assert "plug" not in demo_methods()
    monkeypatch.setitem(DEMO_ENTRIES, "plug", {"model": {"embedding_dim": 8}})
    assert demo_methods()["plug"] == {"model": {"embedding_dim": 8}}
    assert demo_config("plug")["model"] == {"embedding_dim": 8}
    zoo = publish_zoo()
    assert zoo.method_title("plug") == "a plug-in method"
    assert zoo.method_title("dc") == METHOD_TITLES["dc"]
