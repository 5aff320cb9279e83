"""Binomial deviance (BIER form) against a naive per-pair loop."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import to_numpy


def _naive(labels, x, alpha, beta, cost, weights, balance, normalization):
    n = len(labels)
    terms = {True: [], False: []}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            y = int(labels[i] == labels[j])
            s = x[i] @ x[j] / (np.linalg.norm(x[i]) * np.linalg.norm(x[j]))
            c = 1.0 if y else cost
            value = np.log1p(np.exp(-(2 * y - 1) * alpha * (s - beta) * c))
            terms[bool(y)].append((weights[i, j], value))

    def mean(items):
        w = np.array([a for a, _ in items])
        v = np.array([b for _, b in items])
        return (w * v).sum() / (len(items) if normalization == "count" else w.sum())

    if balance == "separate":
        return mean(terms[True]) + mean(terms[False])
    return mean(terms[True] + terms[False])


@pytest.mark.parametrize("balance", ["separate", "joint"])
@pytest.mark.parametrize("normalization", ["count", "weights"])
def test_binomial_deviance_matches_naive_loop(balance, normalization):
    rng = np.random.default_rng(0)
    labels = np.array([0, 0, 1, 1, 2, 2, 2, 3])
    x = rng.normal(size=(8, 6)).astype("float32")
    weights = rng.random((8, 8)).astype("float32")
    loss, count = losses.binomial_deviance_loss(
        labels,
        x,
        alpha=2.0,
        beta=0.5,
        cost=25.0,
        pair_weights=weights,
        balance=balance,
        weight_normalization=normalization,
        return_count=True,
    )
    expected = _naive(labels, x, 2.0, 0.5, 25.0, weights, balance, normalization)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4)
    assert int(count) == 56


def test_default_is_bier_reference_form():
    rng = np.random.default_rng(1)
    labels = np.array([0, 0, 1, 1, 1, 2])
    x = rng.normal(size=(6, 4)).astype("float32")
    expected = _naive(labels, x, 2.0, 0.5, 25.0, np.ones((6, 6)), "separate", "count")
    np.testing.assert_allclose(float(losses.BinomialDevianceLoss()(labels, x)), expected, rtol=1e-4)


def test_pairs_are_stable_for_extreme_similarities():
    s = np.array([[1.0, -1.0], [-1.0, 1.0]], "float32")
    pos = np.array([[False, True], [True, False]])
    values = losses.binomial_deviance_pairs(s, pos, ~pos & ~np.eye(2, dtype=bool), cost=1e4)
    assert np.all(np.isfinite(to_numpy(values)))
    # s = -1 for a positive pair: log(1 + exp(2 * 1.5)).
    np.testing.assert_allclose(to_numpy(values)[0, 1], np.log1p(np.exp(3.0)), rtol=1e-6)


def test_invalid_cost_is_rejected():
    with pytest.raises(ValueError, match="cost"):
        losses.BinomialDevianceLoss(cost=0.0)
