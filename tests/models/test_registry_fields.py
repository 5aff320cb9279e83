"""A method declares everything about itself in its `MethodSpec`: the zoo cards' title and the
demo's entries come from there, for built-in and plug-in methods alike."""

import importlib.util
import os

import pytest

from keras_dml.demo import demo_config, demo_methods
from keras_dml.methods import get_method, list_methods, register_method, unregister_method
from keras_dml.models import EmbeddingModel
from tests.support.paths import REPO_ROOT

BUILT_IN = ("abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads")


def publish_zoo():
    path = os.path.join(REPO_ROOT, "recipes", "publish_zoo.py")
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


def test_every_built_in_method_declares_its_title_and_all_but_mheads_a_demo_entry():
    for name in BUILT_IN:
        assert get_method(name).title, name
    assert set(demo_methods()) == set(BUILT_IN) - {"mheads"}
    assert list(demo_methods())[0] == "baseline"
    assert demo_config("bier")["loss"] == {"name": "binomial_deviance"}


def test_a_plug_in_joins_the_demo_through_its_spec_and_gets_its_description_as_title(registered):
    register_method("plug", description="a plug-in method")(build_plain)
    registered.append("plug")
    assert "plug" not in demo_methods()
    register_method(
        "plug_demo", description="another", demo={"model": {"embedding_dim": 8}}, title="Plug"
    )(build_plain)
    registered.append("plug_demo")
    assert demo_methods()["plug_demo"] == {"model": {"embedding_dim": 8}}
    assert demo_config("plug_demo")["model"] == {"embedding_dim": 8}
    zoo = publish_zoo()
    assert zoo.method_title("plug") == "a plug-in method"
    assert zoo.method_title("plug_demo") == "Plug"
    assert zoo.method_title("dc") == get_method("dc").title
