"""Proxy-Anchor loss (Eq. 4) against a naive per-proxy loop, and its defining properties."""

import keras
import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import gradients
from tests.support.class_loss_reference import naive_proxy_anchor, random_batch


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alpha, delta", [(32.0, 0.1), (8.0, 0.3)])
def test_matches_naive_loop(seed, alpha, delta):
    labels, embeddings, proxies = random_batch(seed)
    expected = naive_proxy_anchor(labels, embeddings, proxies, alpha, delta)
    actual = losses.proxy_anchor_loss(labels, embeddings, proxies, alpha=alpha, delta=delta)
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_defaults_are_the_papers():
    labels, embeddings, proxies = random_batch(8)
    expected = naive_proxy_anchor(labels, embeddings, proxies, alpha=32.0, delta=0.1)
    np.testing.assert_allclose(
        float(losses.proxy_anchor_loss(labels, embeddings, proxies)), expected, rtol=1e-5
    )
    layer = losses.ProxyAnchorLoss(num_classes=3, embedding_dim=2)
    assert (layer.alpha, layer.delta) == (32.0, 0.1)


def test_positive_term_averages_over_proxies_with_positives_only():
    """One sample of class 0 among 5 proxies: the positive term is divided by 1, not 5."""
    proxies = np.eye(5, 3, dtype="float32")
    embeddings = np.array([[1.0, 0.0, 0.0]], "float32")  # s = 1 with its proxy, 0 with others
    loss = float(losses.proxy_anchor_loss([0], embeddings, proxies, alpha=2.0, delta=0.1))
    positive = np.log1p(np.exp(-2.0 * (1.0 - 0.1)))
    negative = 4 * np.log1p(np.exp(2.0 * (0.0 + 0.1))) / 5  # proxy 0 has no negative: log(1)
    np.testing.assert_allclose(loss, positive + negative, rtol=1e-6)


def test_absent_proxies_only_receive_the_negative_term():
    """The gradient of an absent class's proxy is that of its negative term, 1/|P| log(...)."""
    labels, embeddings, proxies = random_batch(4)
    (gradient,) = gradients(lambda w: losses.proxy_anchor_loss(labels, embeddings, w), [proxies])
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)

    def negative_term(proxy):
        similarity = keras.ops.matmul(x, proxy / keras.ops.norm(proxy))
        return keras.ops.log1p(keras.ops.sum(keras.ops.exp(32.0 * (similarity + 0.1)))) / len(
            proxies
        )

    absent = sorted(set(range(len(proxies))) - set(labels.tolist()))
    assert absent
    for p in absent:
        (expected,) = gradients(negative_term, [proxies[p]])
        assert np.abs(expected).sum() > 0.0
        np.testing.assert_allclose(gradient[p], expected, rtol=1e-4)


def test_layer_matches_the_function_with_its_proxies():
    labels, embeddings, proxies = random_batch(5)
    layer = losses.ProxyAnchorLoss(num_classes=7, embedding_dim=6, alpha=16.0, delta=0.2)
    layer.proxies.assign(proxies)
    expected = losses.proxy_anchor_loss(labels, embeddings, proxies, alpha=16.0, delta=0.2)
    np.testing.assert_allclose(float(layer(labels, embeddings)), float(expected), rtol=1e-6)


def test_rejects_a_non_positive_alpha():
    with pytest.raises(ValueError, match="alpha"):
        losses.ProxyAnchorLoss(num_classes=3, embedding_dim=2, alpha=0.0)
