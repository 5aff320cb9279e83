"""Multi-similarity loss and mining against a naive per-anchor loop (reference-code form)."""

import numpy as np
import pytest

from keras_dml import losses


def _naive(labels, x, alpha, beta, base, epsilon):
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    s = x @ x.T
    n = len(labels)
    total, count = 0.0, 0
    for i in range(n):
        pos = np.array([s[i, j] for j in range(n) if j != i and labels[j] == labels[i]])
        neg = np.array([s[i, k] for k in range(n) if labels[k] != labels[i]])
        if len(pos) == 0 or len(neg) == 0:
            continue
        neg_pairs = neg[neg + epsilon > pos.min()]
        pos_pairs = pos[pos - epsilon < neg.max()]
        if len(neg_pairs) == 0 or len(pos_pairs) == 0:
            continue
        total += np.log1p(np.exp(-alpha * (pos_pairs - base)).sum()) / alpha
        total += np.log1p(np.exp(beta * (neg_pairs - base)).sum()) / beta
        count += len(pos_pairs) + len(neg_pairs)
    return total / n, count


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("base, epsilon", [(1.0, 0.1), (0.5, 0.1), (0.5, 0.3)])
def test_multi_similarity_matches_naive_loop(seed, base, epsilon):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=10)
    x = rng.normal(size=(10, 4))
    loss, count = losses.multi_similarity_loss(
        labels, x.astype("float32"), 2.0, 50.0, base, epsilon, return_count=True
    )
    expected, expected_count = _naive(labels, x, 2.0, 50.0, base, epsilon)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4)
    assert int(count) == expected_count


def test_mining_drops_easy_pairs():
    # Two tight, far apart clusters: every negative is far below the hardest positive minus
    # epsilon, so nothing is mined and the loss is exactly 0.
    x = np.array([[1.0, 0.0], [0.99, 0.01], [-1.0, 0.0], [-0.99, -0.01]], "float32")
    loss, count = losses.multi_similarity_loss([0, 0, 1, 1], x, return_count=True)
    assert float(loss) == 0.0 and int(count) == 0


def test_large_beta_is_numerically_stable():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], "float32")
    loss = losses.multi_similarity_loss([0, 0, 1, 1], x, beta=500.0, base=0.0)
    assert np.isfinite(float(loss)) and float(loss) > 0.0
