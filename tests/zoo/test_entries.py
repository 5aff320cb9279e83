"""The zoo's shipped entries load offline, verified, and reproduce the metrics on their cards."""

import glob
import os

import numpy as np
import pytest

from keras_dml import zoo
from keras_dml.data import load_dataset
from keras_dml.methods import list_methods
from keras_dml.training import evaluate_model
from tests.support.ci_rotation import rotating
from tests.support.paths import REPO_ROOT

PUBLISHED = [m["name"] for m in zoo.list_models(status="published")]
# Digits entries re-evaluate in a second; the others (28,000 Fashion-MNIST test images) are slow.
FAST = [m["name"] for m in zoo.list_models(status="published") if m["dataset"] == "digits"]
SLOW = [name for name in PUBLISHED if name not in FAST]
PAPER_SCALE = [m["name"] for m in zoo.list_models(status="not published")]


def methods_with_recipes():
    """Registered methods with a recipe JSON in `recipes/configs/` (iterates the registry)."""
    root = REPO_ROOT
    return {
        name
        for name in list_methods()
        if glob.glob(os.path.join(root, "recipes", "configs", f"{name}_*.json"))
    }


def test_every_method_has_a_shipped_entry_and_paper_recipes_are_listed():
    methods = {zoo.get_card(name).data["method"] for name in PUBLISHED}
    assert {"baseline", "dc", "hdc", "bier", "abe", "dcml"} <= methods_with_recipes()
    assert methods_with_recipes() <= methods
    assert methods <= set(list_methods())
    for name in PAPER_SCALE:
        card = zoo.get_card(name).data
        assert all("url" not in f for f in card.get("files", []))
        assert card["training"]["recipe"].startswith("recipes/configs/")


def _check_reproduces(name):
    card = zoo.get_card(name).data
    dataset = card["metrics"]["dataset"]
    model = zoo.load(name)
    size = card["preprocessing"]["input_size"][0]
    test = load_dataset(dataset, split="test", image_size=size)
    metrics = evaluate_model(model, {"test": test}, batch_size=256, image_size=size)
    recorded = card["metrics"]["values"]
    for key in ("recall@1", "map@r", "r_precision"):
        assert metrics[key] == pytest.approx(recorded[key], abs=1e-4), key
    assert np.isfinite(metrics["nmi"])


@pytest.mark.parametrize("name", FAST)
def test_entry_loads_and_reproduces_its_metrics(name):
    _check_reproduces(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", rotating(SLOW))
def test_large_entry_reproduces_its_metrics(name):
    _check_reproduces(name)
