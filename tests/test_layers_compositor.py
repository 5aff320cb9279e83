import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_dml.layers.compositor import Compositor, straight_through_sign
from tests.helpers import check_layer


def test_straight_through_sign_forward_is_sign_backward_is_tanh():
    x = tf.constant([-2.0, -0.3, 0.0, 0.4, 3.0])
    r = tf.constant([1.0, -2.0, 0.5, 3.0, -1.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        hard = tf.reduce_sum(straight_through_sign(x) * r)
        soft = tf.reduce_sum(tf.tanh(x) * r)
    np.testing.assert_array_equal(straight_through_sign(x).numpy(), [-1, -1, -1, 1, 1])
    np.testing.assert_allclose(tape.gradient(hard, x), tape.gradient(soft, x), atol=1e-7)


def test_weights_are_softmax_times_sign_and_rows_sum_to_one():
    layer = Compositor(num_compositors=5, num_learners=3)
    y = np.random.default_rng(0).normal(size=(7, 12)).astype("float32")
    scores = {k: v.numpy() for k, v in layer.scores(y).items()}
    logits = y @ layer.weighting_kernel.numpy() + layer.weighting_bias.numpy()
    logits = logits.reshape(7, 5, 3)
    softmax = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    signs = np.where(y @ layer.sign_kernel.numpy() + layer.sign_bias.numpy() > 0, 1.0, -1.0)
    np.testing.assert_allclose(scores["weighting_scores"], softmax, rtol=1e-5)
    np.testing.assert_array_equal(scores["sign_scores"], signs.reshape(7, 5, 3))
    np.testing.assert_allclose(scores["weights"], softmax * signs.reshape(7, 5, 3), rtol=1e-5)
    np.testing.assert_allclose(layer(y).numpy(), scores["weights"])
    np.testing.assert_allclose(np.abs(scores["weights"]).sum(-1), 1.0, atol=1e-6)


def test_sign_branch_gradient_is_the_tanh_gradient():
    layer = Compositor(num_compositors=2, num_learners=3)
    y = tf.constant(np.random.default_rng(1).normal(size=(4, 6)).astype("float32") * 0.2)
    r = tf.constant(np.random.default_rng(2).normal(size=(4, 2, 3)).astype("float32"))
    with tf.GradientTape() as tape:
        scores = layer.scores(y)
        loss = tf.reduce_sum(scores["weights"] * r)
    gradient = tape.gradient(loss, layer.sign_kernel).numpy()
    pre = (y.numpy() @ layer.sign_kernel.numpy() + layer.sign_bias.numpy()).reshape(4, 2, 3)
    upstream = r.numpy() * scores["weighting_scores"].numpy() * (1.0 - np.tanh(pre) ** 2)
    expected = y.numpy().T @ upstream.reshape(4, 6)
    assert np.abs(gradient).max() > 0
    np.testing.assert_allclose(gradient, expected, rtol=1e-4, atol=1e-6)


def test_standard_normal_initialisation():
    layer = Compositor(num_compositors=8, num_learners=4)
    layer.build((None, 2048))
    for weight in layer.weights:
        values = weight.numpy()
        assert abs(values.mean()) < 0.05 and abs(values.std() - 1.0) < 0.05 or values.ndim == 1


def test_serialization_roundtrip():
    layer = Compositor(num_compositors=3, num_learners=2, name="comp")
    reloaded = check_layer(layer, (8,))
    assert reloaded.output.shape[1:] == (3, 2)
    config = Compositor(4, 2, kernel_initializer="glorot_uniform").get_config()
    assert Compositor.from_config(config).get_config() == config
    assert keras.saving.get_registered_name(Compositor) == "keras_dml>Compositor"


@pytest.mark.parametrize("kwargs", [{"num_compositors": 0}, {"num_learners": 1.5}])
def test_invalid_arguments(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        Compositor(**kwargs)
