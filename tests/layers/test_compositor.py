import keras
import numpy as np
import pytest

from keras_dml.layers.compositor import Compositor, straight_through_sign
from tests.support.backend_utils import gradients, to_numpy
from tests.support.helpers import check_layer


def test_straight_through_sign_forward_is_sign_backward_is_tanh():
    x = np.array([-2.0, -0.3, 0.0, 0.4, 3.0], "float32")
    r = np.array([1.0, -2.0, 0.5, 3.0, -1.0], "float32")
    (hard,) = gradients(
        lambda x: keras.ops.sum(keras.ops.multiply(straight_through_sign(x), r)), [x]
    )
    (soft,) = gradients(lambda x: keras.ops.sum(keras.ops.multiply(keras.ops.tanh(x), r)), [x])
    np.testing.assert_array_equal(to_numpy(straight_through_sign(x)), [-1, -1, -1, 1, 1])
    assert np.abs(soft).min() > 0.0
    np.testing.assert_allclose(hard, soft, atol=1e-7)


def test_weights_are_softmax_times_sign_and_rows_sum_to_one():
    layer = Compositor(num_compositors=5, num_learners=3)
    y = np.random.default_rng(0).normal(size=(7, 12)).astype("float32")
    scores = {k: to_numpy(v) for k, v in layer.scores(y).items()}
    logits = y @ to_numpy(layer.weighting_kernel) + to_numpy(layer.weighting_bias)
    logits = logits.reshape(7, 5, 3)
    softmax = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    signs = np.where(y @ to_numpy(layer.sign_kernel) + to_numpy(layer.sign_bias) > 0, 1.0, -1.0)
    np.testing.assert_allclose(scores["weighting_scores"], softmax, rtol=1e-5)
    np.testing.assert_array_equal(scores["sign_scores"], signs.reshape(7, 5, 3))
    np.testing.assert_allclose(scores["weights"], softmax * signs.reshape(7, 5, 3), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(layer(y)), scores["weights"])
    np.testing.assert_allclose(np.abs(scores["weights"]).sum(-1), 1.0, atol=1e-6)


def test_sign_branch_gradient_is_the_tanh_gradient():
    layer = Compositor(num_compositors=2, num_learners=3)
    y = np.random.default_rng(1).normal(size=(4, 6)).astype("float32") * 0.2
    r = np.random.default_rng(2).normal(size=(4, 2, 3)).astype("float32")
    layer.build(y.shape)
    (gradient,) = gradients(
        lambda kernel: keras.ops.sum(keras.ops.multiply(layer.scores(y)["weights"], r)),
        [layer.sign_kernel],
    )
    weighting_scores = to_numpy(layer.scores(y)["weighting_scores"])
    pre = (y @ to_numpy(layer.sign_kernel) + to_numpy(layer.sign_bias)).reshape(4, 2, 3)
    upstream = r * weighting_scores * (1.0 - np.tanh(pre) ** 2)
    expected = y.T @ upstream.reshape(4, 6)
    assert np.abs(gradient).max() > 0
    np.testing.assert_allclose(gradient, expected, rtol=1e-4, atol=1e-6)


def test_standard_normal_initialisation():
    # 64 x 64 = 4,096 units, so the biases hold enough values for their mean and spread to be
    # checked as tightly as the kernels' (the sample std of a mean is then 1 / 64).
    layer = Compositor(num_compositors=64, num_learners=64)
    layer.build((None, 32))
    assert len(layer.weights) == 4
    for weight in layer.weights:
        values = to_numpy(weight)
        assert abs(values.mean()) < 0.06 and abs(values.std() - 1.0) < 0.05, weight.path


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
