import keras
import numpy as np
import pytest

from keras_dml.layers.attention_branch import AttentionBranch
from tests.support.helpers import check_layer


def _inputs(seed=0, n=2, size=4, channels=6, trunk_channels=8):
    rng = np.random.default_rng(seed)
    features = rng.random((n, size, size, channels)).astype("float32")
    trunk = rng.standard_normal((n, size, size, trunk_channels)).astype("float32")
    return features, trunk


def test_check_layer_masks_mode():
    keras.utils.set_random_seed(0)
    check_layer(AttentionBranch(num_learners=3, channels=6), (4, 4, 8))


def test_masks_in_unit_interval_with_feature_shape():
    features, trunk = _inputs()
    layer = AttentionBranch(num_learners=3)
    attended = keras.ops.convert_to_numpy(layer([features, trunk]))
    masks = keras.ops.convert_to_numpy(layer(trunk))
    assert masks.shape == (2, 3, 4, 4, 6)
    assert attended.shape == (2, 3, 4, 4, 6)
    assert masks.min() > 0.0 and masks.max() < 1.0
    np.testing.assert_allclose(attended, features[:, None] * masks, rtol=1e-6)


def test_each_learner_is_a_separate_1x1_convolution():
    features, trunk = _inputs(1)
    layer = AttentionBranch(num_learners=2, channels=6)
    masks = keras.ops.convert_to_numpy(layer(trunk))
    kernels = [keras.ops.convert_to_numpy(k) for k in layer.kernels]
    assert not np.allclose(kernels[0], kernels[1]), "learners must not share an initialisation"
    for m in range(2):
        conv = 1.0 / (1.0 + np.exp(-(trunk @ kernels[m])))  # bias starts at 0
        np.testing.assert_allclose(masks[:, m], conv, atol=1e-5)
        single = keras.ops.convert_to_numpy(layer([features, trunk], learner=m))
        np.testing.assert_allclose(single, features * masks[:, m], atol=1e-6)


def test_masks_resized_to_feature_size():
    features, _ = _inputs(size=8)
    _, trunk = _inputs(size=4)
    out = AttentionBranch(num_learners=2)([features, trunk])
    assert tuple(out.shape) == (2, 2, 8, 8, 6)


def test_round_trip_of_attended_mode():
    features, trunk = _inputs()
    a, b = keras.Input((4, 4, 6)), keras.Input((4, 4, 8))
    model = keras.Model([a, b], AttentionBranch(num_learners=2, name="branch")([a, b]))
    clone = keras.Model.from_config(model.get_config())
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(clone([features, trunk])),
        keras.ops.convert_to_numpy(model([features, trunk])),
    )


def test_argument_errors():
    with pytest.raises(ValueError, match="num_learners"):
        AttentionBranch(num_learners=0)
    with pytest.raises(ValueError, match="channels"):
        AttentionBranch(num_learners=2)(np.zeros((1, 4, 4, 8), "float32"))
    with pytest.raises(ValueError, match="differs"):
        AttentionBranch(2, channels=5)([np.zeros((1, 4, 4, 6)), np.zeros((1, 4, 4, 8))])
    with pytest.raises(ValueError, match="learner"):
        layer = AttentionBranch(2, channels=3)
        layer(np.zeros((1, 4, 4, 8), "float32"), learner=2)
