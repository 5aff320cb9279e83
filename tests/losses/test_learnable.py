"""Loss layers with trainable parameters (learnable beta, proxies) inside a model's training."""

import os
import tempfile

import keras
import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import dtype_name, gradients, to_numpy

DIM = 6


@keras.saving.register_keras_serializable(package="keras_dml_tests")
class LossOwningModel(keras.Model):
    """A tiny embedding model that owns a loss layer and uses it in `compute_loss`."""

    def __init__(self, loss_config, **kwargs):
        super().__init__(**kwargs)
        self.loss_config = loss_config
        self.embed = keras.layers.Dense(DIM)
        self.loss_layer = losses.get(loss_config)
        self.num_valid_tracker = keras.metrics.Mean(name="num_valid")

    def call(self, inputs):
        return self.embed(inputs)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        loss, num_valid = self.loss_layer(y, y_pred, return_count=True)
        self.num_valid_tracker.update_state(num_valid)
        return loss

    def get_config(self):
        return {**super().get_config(), "loss_config": self.loss_config}


CONFIGS = {
    "global_beta": {"name": "learnable_margin", "sampling": "closest", "nu": 0.01},
    "class_beta": {"name": "learnable_margin", "num_classes": 4, "seed": 0},
    "proxies": {"name": "proxy_nca", "num_classes": 4, "embedding_dim": DIM},
}


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(16, 5)).astype("float32"), (np.arange(16) % 4).astype("int32")


@pytest.mark.parametrize("config_name", sorted(CONFIGS))
def test_fit_trains_the_loss_parameters_and_saves_them(config_name):
    keras.utils.set_random_seed(0)
    inputs, labels = _data()
    model = LossOwningModel(CONFIGS[config_name])
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    parameter = model.loss_layer.trainable_weights[0]
    assert any(parameter is w for w in model.trainable_weights)
    before = to_numpy(parameter).copy()
    history = model.fit(inputs, labels, batch_size=8, epochs=2, shuffle=False, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert history.history["num_valid"][-1] > 0
    assert not np.allclose(before, to_numpy(parameter))

    path = os.path.join(tempfile.mkdtemp(), "model.keras")
    model.save(path)
    restored = keras.saving.load_model(path, safe_mode=True)
    np.testing.assert_allclose(
        to_numpy(restored.loss_layer.trainable_weights[0]), to_numpy(parameter)
    )
    np.testing.assert_allclose(
        restored.predict(inputs, verbose=0), model.predict(inputs, verbose=0)
    )


def test_per_class_beta_gradient_reaches_only_classes_in_the_batch():
    layer = losses.LearnableMarginLoss(num_classes=5, sampling="closest", normalize_by="pairs")
    labels = np.array([0, 0, 1, 1, 2, 2])
    x = np.random.default_rng(1).normal(size=(6, 4)).astype("float32")
    (gradient,) = gradients(lambda beta: layer(labels, x), [layer.beta])
    assert np.all(np.isfinite(gradient))
    assert np.all(gradient[3:] == 0.0) and np.any(gradient[:3] != 0.0)


def test_beta_for_returns_per_sample_betas():
    layer = losses.LearnableMarginLoss(num_classes=3, initial_beta=1.0)
    layer.beta.assign([1.0, 2.0, 3.0])
    np.testing.assert_allclose(to_numpy(layer.beta_for(np.array([2, 0, 2]))), [3.0, 1.0, 3.0])
    global_layer = losses.LearnableMarginLoss(initial_beta=0.7)
    np.testing.assert_allclose(to_numpy(global_layer.beta_for(np.array([5, 9]))), [0.7, 0.7])


def test_learnable_margin_matches_the_function_with_its_beta():
    layer = losses.LearnableMarginLoss(num_classes=2, sampling="closest", nu=0.05)
    layer.beta.assign([1.0, 1.3])
    labels = np.array([0, 0, 1, 1])
    x = np.random.default_rng(2).normal(size=(4, 3)).astype("float32")
    expected = losses.margin_loss(
        labels, x, beta=np.array([1.0, 1.0, 1.3, 1.3], "f4"), nu=0.05, sampling="closest"
    )
    np.testing.assert_allclose(float(layer(labels, x)), float(expected), rtol=1e-6)


def test_layers_keep_float32_under_mixed_precision():
    keras.mixed_precision.set_dtype_policy("mixed_float16")
    try:
        layer = losses.ProxyNCALoss(num_classes=3, embedding_dim=4)
        margin = losses.LearnableMarginLoss(num_classes=3)
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    x = np.random.default_rng(3).normal(size=(4, 4)).astype("float16")
    labels = np.array([0, 0, 1, 2])
    assert dtype_name(layer(labels, x)) == "float32"
    assert dtype_name(margin(labels, x)) == "float32"
    assert layer.proxies.dtype == "float32" and margin.beta.dtype == "float32"
