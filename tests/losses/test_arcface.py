"""ArcFace against a naive per-sample loop (with the threshold fallback), and its properties."""

import math

import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import to_numpy
from tests.support.class_loss_reference import naive_arcface, random_batch


def batch_with_far_targets(seed):
    """A batch where every other sample points almost opposite to its class weight."""
    labels, embeddings, weights = random_batch(seed)
    rng = np.random.default_rng(seed + 50)
    unit = weights / np.linalg.norm(weights, axis=1, keepdims=True)
    embeddings[::2] = -unit[labels[::2]] + 0.05 * rng.normal(size=embeddings[::2].shape)
    return labels, embeddings.astype("float32"), weights


def target_cosines(labels, embeddings, weights):
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    w = weights / np.linalg.norm(weights, axis=1, keepdims=True)
    return np.sum(x * w[labels], axis=1)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("scale, margin", [(64.0, 0.5), (16.0, 0.2)])
@pytest.mark.parametrize("easy_margin", [False, True])
def test_matches_naive_loop(seed, scale, margin, easy_margin):
    labels, embeddings, weights = random_batch(seed)
    expected = naive_arcface(labels, embeddings, weights, scale, margin, easy_margin)
    actual = losses.arcface_loss(
        labels, embeddings, weights, scale=scale, margin=margin, easy_margin=easy_margin
    )
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


@pytest.mark.parametrize("easy_margin", [False, True])
def test_matches_naive_loop_beyond_the_threshold(easy_margin):
    """Targets at angles above pi - m take the fallback `cos(theta) - m sin(m)`."""
    labels, embeddings, weights = batch_with_far_targets(3)
    assert np.sum(target_cosines(labels, embeddings, weights) < math.cos(math.pi - 0.5)) >= 3
    expected = naive_arcface(labels, embeddings, weights, 64.0, 0.5, easy_margin)
    actual = losses.arcface_loss(labels, embeddings, weights, easy_margin=easy_margin)
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_target_logit_is_monotonic_in_the_angle():
    cosines = np.cos(np.linspace(0.0, math.pi, 721)).astype("float32")
    logits = to_numpy(losses.arcface_target_logit(cosines, margin=0.5))
    assert np.all(np.diff(logits) <= 1e-6)
    angles = np.arccos(np.clip(cosines.astype("float64"), -1.0, 1.0))
    below = angles <= math.pi - 0.5
    np.testing.assert_allclose(logits[below], np.cos(angles[below] + 0.5), atol=1e-6)
    beyond = np.cos(angles[~below]) - 0.5 * math.sin(0.5)
    np.testing.assert_allclose(logits[~below], beyond, atol=1e-6)


def test_defaults_are_the_papers():
    layer = losses.ArcFaceLoss(num_classes=3, embedding_dim=2)
    assert (layer.scale, layer.margin, layer.easy_margin) == (64.0, 0.5, False)
    labels, embeddings, weights = random_batch(9)
    np.testing.assert_allclose(
        float(losses.arcface_loss(labels, embeddings, weights)),
        naive_arcface(labels, embeddings, weights, 64.0, 0.5),
        rtol=1e-5,
    )


def test_zero_margin_is_normalised_softmax_at_temperature_one_over_scale():
    labels, embeddings, weights = random_batch(6)
    arcface = losses.arcface_loss(labels, embeddings, weights, scale=20.0, margin=0.0)
    softmax = losses.normalized_softmax_loss(labels, embeddings, weights, temperature=1 / 20.0)
    np.testing.assert_allclose(float(arcface), float(softmax), rtol=1e-5)


def test_layer_matches_the_function_with_its_weights():
    labels, embeddings, weights = random_batch(5)
    layer = losses.ArcFaceLoss(num_classes=7, embedding_dim=6, scale=30.0, margin=0.3)
    layer.class_weights.assign(weights)
    expected = losses.arcface_loss(labels, embeddings, weights, scale=30.0, margin=0.3)
    np.testing.assert_allclose(float(layer(labels, embeddings)), float(expected), rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"margin": 1.6}, "margin"), ({"margin": -0.1}, "margin"), ({"scale": 0}, "scale")],
)
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        losses.ArcFaceLoss(num_classes=3, embedding_dim=2, **kwargs)
