"""Run-config learning-rate multipliers: `optimizer.lr_multipliers`, ProxyAnchor's proxies x100,
and methods that add their own multipliers to the user's."""

import keras
import numpy as np
import pytest

from keras_dml import backbones, losses
from keras_dml.losses.class_weights import with_recommended_lr_multipliers
from keras_dml.methods.defaults import build_optimizer
from keras_dml.models import EmbeddingModel
from keras_dml.optimizers import LearningRateMultipliers, with_multipliers


def test_proxy_anchor_gets_its_papers_proxy_learning_rate():
    filled = with_recommended_lr_multipliers({"name": "adam"}, {"name": "proxy_anchor"})
    assert filled["lr_multipliers"] == {"proxies$": 100.0}


@pytest.mark.parametrize(
    "optimizer, loss",
    [
        ({"name": "adam", "lr_multipliers": {}}, {"name": "proxy_anchor"}),  # user's choice kept
        ({"name": "adam"}, {"name": "normalized_softmax"}),  # no recommendation
        ({"name": "adam"}, None),
    ],
)
def test_other_entries_are_left_alone(optimizer, loss):
    assert with_recommended_lr_multipliers(optimizer, loss) == optimizer


def test_build_optimizer_wraps_and_rejects_a_non_dict():
    optimizer = build_optimizer({"optimizer": {"name": "adam", "lr_multipliers": {"x$": 3.0}}})
    assert isinstance(optimizer, LearningRateMultipliers)
    assert optimizer.multipliers == {"x$": 3.0}
    assert not isinstance(build_optimizer({"optimizer": {"name": "adam"}}), LearningRateMultipliers)
    with pytest.raises(ValueError, match="lr_multipliers"):
        build_optimizer({"optimizer": {"name": "adam", "lr_multipliers": 100.0}})


def test_with_multipliers_merges_and_the_existing_pattern_wins():
    user = LearningRateMultipliers(keras.optimizers.Adam(1e-3), {"head": 2.0, "proxies$": 100.0})
    merged = with_multipliers(user, {"head": 10.0, "masks": 50.0})
    assert merged.multipliers == {"head": 2.0, "proxies$": 100.0, "masks": 50.0}
    assert merged.inner_optimizer is user.inner_optimizer
    plain = with_multipliers("adam", {})  # no multipliers: the optimizer itself, unwrapped
    # isinstance, not `type is`: on PyTorch Keras returns its own Adam subclass
    assert isinstance(plain, keras.optimizers.Adam)
    assert not isinstance(plain, LearningRateMultipliers)


def test_proxies_step_100x_through_the_configured_optimizer():
    """One Adam step moves each proxy by ~100 x lr (Adam's first step is lr * sign(grad))."""
    keras.utils.set_random_seed(0)
    model = EmbeddingModel(backbones.get("convnet", input_shape=(16, 16, 1), width=4), 8)
    loss = losses.get("proxy_anchor", num_classes=4, embedding_dim=8)
    config = {
        "optimizer": with_recommended_lr_multipliers(
            {"name": "adam", "learning_rate": 1e-4}, {"name": "proxy_anchor"}
        )
    }
    model.compile(optimizer=build_optimizer(config), loss=loss)
    images = np.random.default_rng(0).random((8, 16, 16, 1)).astype("float32") * 255
    labels = np.repeat(np.arange(4), 2)
    before = keras.ops.convert_to_numpy(loss.class_weight_variable).copy()
    model.fit(images, labels, batch_size=8, epochs=1, verbose=0, shuffle=False)
    step = np.abs(keras.ops.convert_to_numpy(loss.class_weight_variable) - before)
    moved = step[step > 0]
    np.testing.assert_allclose(np.median(moved), 1e-2, rtol=0.05)
