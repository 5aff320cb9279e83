"""Proxy-NCA loss against a naive per-sample loop."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import to_numpy


def _naive(labels, x, proxies, scale, exclude_positive):
    x = scale * x / np.linalg.norm(x, axis=1, keepdims=True)
    p = scale * proxies / np.linalg.norm(proxies, axis=1, keepdims=True)
    terms = []
    for i, y in enumerate(labels):
        if not 0 <= y < len(p):
            continue
        d = np.array([np.sum((x[i] - q) ** 2) for q in p])
        classes = [z for z in range(len(p)) if z != y or not exclude_positive]
        terms.append(d[y] + np.log(np.sum(np.exp(-d[classes]))))
    return np.mean(terms), len(terms)


@pytest.mark.parametrize("exclude_positive", [True, False])
@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_proxy_nca_matches_naive_loop(exclude_positive, scale):
    rng = np.random.default_rng(0)
    labels = np.array([0, 2, 2, 4, 1, 9])  # 9 is outside the 5 classes and is ignored
    x = rng.normal(size=(6, 4)).astype("float32")
    proxies = rng.normal(size=(5, 4)).astype("float32")
    loss, count = losses.proxy_nca_loss(
        labels, x, proxies, scale, exclude_positive, return_count=True
    )
    expected, expected_count = _naive(labels, x, proxies, scale, exclude_positive)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4)
    assert int(count) == expected_count == 5


def test_layer_uses_its_proxies():
    layer = losses.ProxyNCALoss(num_classes=3, embedding_dim=4, scale=2.0)
    labels = np.array([0, 1, 2, 1])
    x = np.random.default_rng(1).normal(size=(4, 4)).astype("float32")
    expected, _ = _naive(labels, x, to_numpy(layer.proxies), 2.0, True)
    np.testing.assert_allclose(float(layer(labels, x)), expected, rtol=1e-4)


def test_shape_errors_name_the_problem():
    with pytest.raises(ValueError, match="same dimension"):
        losses.proxy_nca_loss([0], np.ones((1, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError, match="num_classes"):
        losses.ProxyNCALoss(num_classes=1, embedding_dim=4)
