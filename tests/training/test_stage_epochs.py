"""Stage options (`conquer_epoch`, `finetune_epoch`) that a run's epochs never reach.

The Fashion-MNIST D&C and hierarchical D&C recipes set their last stage at or past their own
epoch count, so it silently never ran; every recipe now reaches its stages, and a run whose
epochs cannot reach one warns in one line.
"""

import glob
import json
import os
import warnings

import pytest

from keras_dml.methods import get_method
from keras_dml.training.resolve import warn_unreached_stages
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
RECIPES = sorted(glob.glob(os.path.join(ROOT, "recipes", "configs", "*.json")))


@pytest.mark.parametrize("path", RECIPES, ids=os.path.basename)
def test_every_recipe_reaches_its_stages(path):
    with open(path) as f:
        config = json.load(f)
    options = get_method(config["method"]).parse_options(config)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unreached_stages(options, config["epochs"])


@pytest.mark.parametrize(
    "method, option",
    [("dc", "conquer_epoch"), ("hdc", "finetune_epoch")],
)
def test_a_stage_past_the_last_epoch_warns_with_the_fix(method, option):
    options = get_method(method).parse_options({"method_options": {option: 5}})
    with pytest.warns(UserWarning, match=rf"{option}=5 is not below epochs=5.*at most 4"):
        warn_unreached_stages(options, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unreached_stages(options, 6)  # epoch 5 is the sixth: the stage runs
        warn_unreached_stages(get_method(method).parse_options({}), 1)  # None: no stage
