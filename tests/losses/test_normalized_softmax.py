"""Normalised softmax loss against a naive per-sample loop, and its defining properties."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import gradients
from tests.support.class_loss_reference import naive_normalized_softmax, random_batch


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("temperature", [0.05, 0.5])
def test_matches_naive_loop(seed, temperature):
    labels, embeddings, weights = random_batch(seed)
    expected = naive_normalized_softmax(labels, embeddings, weights, temperature)
    actual = losses.normalized_softmax_loss(labels, embeddings, weights, temperature=temperature)
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_default_temperature_is_the_papers():
    labels, embeddings, weights = random_batch(7)
    expected = naive_normalized_softmax(labels, embeddings, weights, temperature=0.05)
    np.testing.assert_allclose(
        float(losses.normalized_softmax_loss(labels, embeddings, weights)), expected, rtol=1e-5
    )
    assert losses.NormalizedSoftmaxLoss(num_classes=3, embedding_dim=2).temperature == 0.05


def test_weights_and_embeddings_are_normalised():
    labels, embeddings, weights = random_batch(1)
    row_scales = np.linspace(0.5, 3.0, len(weights))[:, None].astype("float32")
    base = float(losses.normalized_softmax_loss(labels, embeddings, weights))
    scaled = float(losses.normalized_softmax_loss(labels, 4.0 * embeddings, row_scales * weights))
    np.testing.assert_allclose(scaled, base, rtol=1e-5)


def test_absent_classes_get_gradients_from_the_softmax_denominator():
    labels, embeddings, weights = random_batch(2)
    (gradient,) = gradients(
        lambda w: losses.normalized_softmax_loss(labels, embeddings, w), [weights]
    )
    absent = sorted(set(range(weights.shape[0])) - set(labels.tolist()))
    assert np.all(np.abs(gradient[absent]).sum(axis=1) > 0.0)


def test_layer_matches_the_function_with_its_weights():
    labels, embeddings, weights = random_batch(3)
    layer = losses.NormalizedSoftmaxLoss(num_classes=7, embedding_dim=6, temperature=0.1)
    layer.class_weights.assign(weights)
    expected = losses.normalized_softmax_loss(labels, embeddings, weights, temperature=0.1)
    np.testing.assert_allclose(float(layer(labels, embeddings)), float(expected), rtol=1e-6)


def test_rejects_a_non_positive_temperature():
    with pytest.raises(ValueError, match="temperature"):
        losses.NormalizedSoftmaxLoss(num_classes=3, embedding_dim=2, temperature=0.0)
    with pytest.raises(ValueError, match="temperature"):
        losses.normalized_softmax_loss([0], np.ones((1, 2)), np.ones((3, 2)), temperature=-1.0)
