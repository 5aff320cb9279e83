"""CosFace (large margin cosine loss) against a naive per-sample loop, and its properties."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support.class_loss_reference import naive_cosface, random_batch


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("scale, margin", [(64.0, 0.35), (10.0, 0.6)])
def test_matches_naive_loop(seed, scale, margin):
    labels, embeddings, weights = random_batch(seed)
    expected = naive_cosface(labels, embeddings, weights, scale, margin)
    actual = losses.cosface_loss(labels, embeddings, weights, scale=scale, margin=margin)
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_defaults_are_the_papers():
    layer = losses.CosFaceLoss(num_classes=3, embedding_dim=2)
    assert (layer.scale, layer.margin) == (64.0, 0.35)
    labels, embeddings, weights = random_batch(9)
    np.testing.assert_allclose(
        float(losses.cosface_loss(labels, embeddings, weights)),
        naive_cosface(labels, embeddings, weights, 64.0, 0.35),
        rtol=1e-5,
    )


def test_margin_raises_the_loss_of_every_sample():
    labels, embeddings, weights = random_batch(4)
    without = losses.cosface_loss(labels, embeddings, weights, scale=10.0, margin=0.0)
    softmax = losses.normalized_softmax_loss(labels, embeddings, weights, temperature=0.1)
    np.testing.assert_allclose(float(without), float(softmax), rtol=1e-5)
    assert float(losses.cosface_loss(labels, embeddings, weights, scale=10.0)) > float(without)


def test_layer_matches_the_function_with_its_weights():
    labels, embeddings, weights = random_batch(5)
    layer = losses.CosFaceLoss(num_classes=7, embedding_dim=6, scale=30.0, margin=0.2)
    layer.class_weights.assign(weights)
    expected = losses.cosface_loss(labels, embeddings, weights, scale=30.0, margin=0.2)
    np.testing.assert_allclose(float(layer(labels, embeddings)), float(expected), rtol=1e-6)


@pytest.mark.parametrize("kwargs, match", [({"margin": -0.1}, "margin"), ({"scale": -1}, "scale")])
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        losses.CosFaceLoss(num_classes=3, embedding_dim=2, **kwargs)
