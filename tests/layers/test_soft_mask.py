import keras
import numpy as np
import pytest

from keras_dml.layers.soft_mask import SoftMask, block_masks
from tests.support.backend_utils import gradients, value_and_gradients
from tests.support.helpers import check_layer


def built(num_masks=4, dim=8, fixed=False, values=None):
    layer = SoftMask(num_masks, fixed=fixed)
    layer.build((None, dim))
    if values is not None:
        layer.masks.assign(values)
    return layer


def naive_orthogonality(masks, num_active):
    masks = np.maximum(masks, 0.0)
    total, count = 0.0, 0
    for i in range(num_active):
        for j in range(num_active):
            if i != j:
                ni, nj = np.linalg.norm(masks[i]), np.linalg.norm(masks[j])
                total += 0.0 if ni == 0 or nj == 0 else masks[i] @ masks[j] / (ni * nj)
                count += 1
    return total / max(count, 1)


@pytest.mark.parametrize("fixed", [False, True])
def test_check_layer(fixed):
    check_layer(SoftMask(3, fixed=fixed), (6,))


def test_subspaces_are_masked_and_normalised():
    values = np.random.default_rng(0).standard_normal((3, 5)).astype("float32")
    layer = built(3, 5, values=values)
    x = np.random.default_rng(1).standard_normal((4, 5)).astype("float32")
    out = keras.ops.convert_to_numpy(layer(x))
    for k in range(3):
        expected = x * np.maximum(values[k], 0.0)
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        np.testing.assert_allclose(out[:, k], expected, atol=1e-5)
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(layer.subspace(x, k)), expected, atol=1e-5
        )
    combined = x * np.maximum(values[:2], 0.0).sum(0)
    combined /= np.linalg.norm(combined, axis=1, keepdims=True)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer.combine(x, 2)), combined, atol=1e-5)


def test_fixed_masks_are_orthogonal_and_untrainable():
    layer = built(4, 10, fixed=True)
    masks = keras.ops.convert_to_numpy(layer.masks)
    gram = masks @ masks.T
    np.testing.assert_array_equal(gram - np.diag(np.diag(gram)), 0.0)
    np.testing.assert_array_equal(masks.sum(0), 1.0)
    assert layer.trainable_variables == [] and len(layer.non_trainable_variables) == 1
    assert float(layer.orthogonality_loss()) == 0.0
    with pytest.raises(ValueError, match="one dimension per mask"):
        built(8, 4, fixed=True)


@pytest.mark.parametrize("num_active", [1, 2, 4])
def test_orthogonality_loss_matches_naive_loop(num_active):
    values = np.random.default_rng(2).standard_normal((4, 6)).astype("float32")
    values[3] = -1.0  # a mask truncated to zero everywhere by the ReLU
    layer = built(4, 6, values=values)
    actual = float(layer.orthogonality_loss(num_active))
    np.testing.assert_allclose(actual, naive_orthogonality(values, num_active), atol=1e-5)


def test_orthogonality_gradient_reaches_only_masks():
    layer = built(3, 6)  # all ones: maximal overlap
    x = np.ones((2, 6), "float32")
    grad_masks, grad_x = gradients(
        lambda masks, x: layer.orthogonality_loss(3) + 0.0 * keras.ops.sum(x), [layer.masks, x]
    )
    assert np.abs(grad_masks).sum() > 0.0
    np.testing.assert_array_equal(grad_x, 0.0)
    inactive, (grad,) = value_and_gradients(
        lambda masks: layer.orthogonality_loss(1), [layer.masks]
    )
    assert float(inactive) == 0.0
    assert np.abs(grad).sum() == 0.0


def test_split_clones_learned_masks_and_halves_fixed_ones():
    values = np.arange(24, dtype="float32").reshape(4, 6)
    layer = built(4, 6, values=values)
    layer.split([0, 0, 1])
    masks = keras.ops.convert_to_numpy(layer.masks)
    np.testing.assert_array_equal(masks[0], values[0])
    np.testing.assert_array_equal(masks[1], values[0])
    np.testing.assert_array_equal(masks[2], values[1])
    np.testing.assert_array_equal(masks[3], values[3])

    fixed = built(4, 8, fixed=True, values=block_masks(4, 8, num_active=1))
    fixed.split([0, 0])
    fixed.split([0, 0, 1, 1])
    masks = keras.ops.convert_to_numpy(fixed.masks)
    np.testing.assert_array_equal(masks, block_masks(4, 8))
    with pytest.raises(ValueError, match="at most 2 children"):
        layer.split([0, 0, 0])
    with pytest.raises(ValueError, match="outside"):
        layer.split([5])
