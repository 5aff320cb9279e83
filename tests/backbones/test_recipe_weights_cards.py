"""The model cards of the paper recipes say which ImageNet weights file (and digest) the recipe
expects, as the recipe's `backbone.weights` names it."""

import json
import os

from keras_dml.backbones.expected_source import ExpectedSource
from keras_dml.zoo import get_card, list_models
from tests.support.paths import REPO_ROOT


def _recipe(card):
    with open(os.path.join(REPO_ROOT, card["training"]["recipe"])) as f:
        return json.load(f)


def test_paper_recipe_cards_name_the_expected_weights_file():
    checked = 0
    for summary in list_models(status="not published"):
        card = get_card(summary["name"]).data
        weights = _recipe(card)["backbone"].get("weights")
        if not isinstance(weights, dict):
            continue
        expected = ExpectedSource.from_entry(weights).describe()
        assert card["training"].get("backbone_weights") == expected, card["name"]
        checked += 1
    # Every GPU recipe of the five methods has a card (recipes/configs/*_{cub200,...}.json).
    assert checked == 20


def test_the_docs_tables_list_every_paper_recipe_from_its_json():
    from tests.support.docs_site import load_hooks

    hooks = load_hooks()
    backbones_table = hooks.render_tables("<!-- table: paper-backbones -->").splitlines()
    recipes = hooks.paper_recipes()
    assert len(recipes) == 20 and len(backbones_table) == 2 + len(recipes)
    for name, config in recipes.items():
        row = next(line for line in backbones_table if f"`{name}`" in line)
        backbone = config["backbone"]
        frozen = "yes" if backbone["freeze_batchnorm"] else "no"
        expected = ExpectedSource.from_entry(backbone["weights"]).describe()
        preprocessing = {"v1.5": "RGB / 255, ImageNet mean/std"}.get(
            backbone["variant"], "BGR minus mean (104, 117, 123)"
        )
        cells = [backbone["name"], backbone["variant"], "224", preprocessing, frozen, expected]
        assert row == f"| `{name}` | " + " | ".join(cells) + " |"
    weights_table = hooks.render_tables("<!-- table: paper-weights -->")
    assert (
        "| `resnet50-0676ba61.pth` | sha256 0676ba61... | "
        "https://download.pytorch.org/models/resnet50-0676ba61.pth | `keras-dml backbones "
        "convert --backbone resnet50 --from torchvision --state-dict resnet50-0676ba61.pth "
        "--output ~/.keras/keras_dml/backbones/resnet50_v1.5_imagenet.weights.h5` |"
    ) in weights_table
    assert "--from caffe --state-dict bvlc_googlenet.caffemodel" in weights_table
