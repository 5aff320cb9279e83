"""Hierarchical D&C's run-configuration default keeps the backbone training after a division.

The reference code freezes it for the epoch after each division (ImageNet backbone); trained
from scratch and divided every epoch, that left a 3-epoch hangul run one epoch of backbone
training (R@1 0.919 / MAP@R 0.476 against 0.983 / 0.753, README accuracy table). The paper
recipes keep the reference setting.
"""

import glob
import json
import os

import keras
import numpy as np
import pytest

from keras_dml.methods import get_method
from keras_dml.training import train
from tests.support.paths import REPO_ROOT
from tests.training.test_entry_points import array_splits

ROOT = REPO_ROOT


def test_the_default_does_not_freeze_and_the_paper_recipes_do():
    assert get_method("hdc").parse_options({}).freeze_backbone is False
    recipes = glob.glob(os.path.join(ROOT, "recipes", "configs", "hdc_*.json"))
    assert recipes
    for path in recipes:
        with open(path) as f:
            assert json.load(f)["method_options"]["freeze_backbone"] is True, path


class BackboneChange(keras.callbacks.Callback):
    """How far the backbone's trainable weights moved in each epoch (BatchNorm statistics
    update even while its learning rate is 0)."""

    def __init__(self):
        super().__init__()
        self.moved = []

    def _weights(self):
        return [keras.ops.convert_to_numpy(v) for v in self.model.backbone.trainable_weights]

    def on_epoch_begin(self, epoch, logs=None):
        self._start = self._weights()

    def on_epoch_end(self, epoch, logs=None):
        now = self._weights()
        self.moved.append(max(float(np.abs(a - b).max()) for a, b in zip(now, self._start)))


@pytest.mark.parametrize("freeze", [None, True])
def test_the_backbone_trains_after_a_division_unless_frozen(freeze, tmp_path):
    options = {"division_every": 1}
    if freeze is not None:
        options["freeze_backbone"] = freeze
    config = {
        "method": "hdc",
        "dataset": "arrays",
        "epochs": 2,
        "image_size": 32,
        "backbone": "convnet",
        "model": {"embedding_dim": 8, "max_learners": 2},
        "method_options": options,
    }
    change = BackboneChange()
    result = train(
        config,
        str(tmp_path),
        verbose=0,
        splits=array_splits(),
        report=False,
        extra_callbacks=[change],
    )
    assert result["history"]["hdc_num_learners"][-1] == 2  # epoch 1 began with a division
    assert change.moved[0] > 0  # epoch 0: one cluster, the backbone trains either way
    if freeze:
        assert change.moved[1] == 0
    else:
        assert change.moved[1] > 1e-4
