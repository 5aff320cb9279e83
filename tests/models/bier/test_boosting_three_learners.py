"""BIER's online gradient boosting beyond the second learner, against a naive loop of Algorithm 1.

With two learners the running ensemble score is just the first learner's score, so only a third
(or later) learner shows whether its weights come from the recursion
`s_hat^m = (1 - eta_m) s_hat^(m-1) + eta_m s^m` over ALL previous learners (Opitz et al.,
"Deep Metric Learning with BIER", TPAMI 2020, Sec. 3.1, Algorithm 1).
"""

import math

import numpy as np
import pytest

from keras_dml.models.boosting.boosted_loss import boosted_learner_losses
from keras_dml.models.boosting.pair_losses import get_loss_form
from tests.support.backend_utils import to_numpy

# The boosting recursion's running score on each backend: the JAX line runs these.
pytestmark = pytest.mark.backend_semantics

ALPHA, BETA, COST = 2.0, 0.5, 25.0


def unit_rows(rng, n, d):
    x = rng.normal(size=(n, d)).astype("float32")
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def naive_binomial_weight(s_hat, same):
    """`-l'(s_hat)` of Eq. 2 divided by its largest value `alpha C_y`: `sigmoid(-z)`."""
    z = (1.0 if same else -COST) * ALPHA * (s_hat - BETA)
    return 1.0 / (1.0 + math.exp(z))


def naive_binomial_loss(s, same):
    z = (1.0 if same else -COST) * ALPHA * (s - BETA)
    return math.log1p(math.exp(-z))


def naive_boosting(learners, labels):
    """Per-learner pair weights and losses by Algorithm 1, one pair at a time."""
    n = len(labels)
    sims = [e.astype(np.float64) @ e.T.astype(np.float64) for e in learners]
    weights = [np.ones((n, n))]
    running = np.zeros((n, n))
    for m, s in enumerate(sims, start=1):
        eta = 2.0 / (m + 1.0)
        running = (1.0 - eta) * running + eta * s
        nxt = np.zeros((n, n))
        for i in range(n):
            for j in range(n):
                nxt[i, j] = naive_binomial_weight(running[i, j], labels[i] == labels[j])
        weights.append(nxt)
    losses = []
    for s, w in zip(sims, weights):
        pos, neg = [], []
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                value = w[i, j] * naive_binomial_loss(s[i, j], labels[i] == labels[j])
                (pos if labels[i] == labels[j] else neg).append(value)
        losses.append(np.mean(pos) + np.mean(neg))
    return weights[: len(learners)], losses


@pytest.mark.parametrize("num_learners", [3, 4])
def test_third_learner_weights_follow_the_running_ensemble_score(num_learners):
    rng = np.random.default_rng(7)
    labels = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    learners = [unit_rows(rng, labels.size, d) for d in (3, 4, 5, 6)[:num_learners]]
    losses, weights = boosted_learner_losses(learners, labels, get_loss_form("binomial_deviance"))
    expected_weights, expected_losses = naive_boosting(learners, labels)
    off_diagonal = ~np.eye(labels.size, dtype=bool)
    for m in range(num_learners):
        np.testing.assert_allclose(
            to_numpy(weights[m])[off_diagonal],
            expected_weights[m][off_diagonal],
            rtol=1e-4,
            atol=1e-6,
            err_msg=f"pair weights of learner {m + 1}",
        )
        np.testing.assert_allclose(float(losses[m]), expected_losses[m], rtol=1e-4)
    # The data make the recursion matter: learner 3's weights from the ensemble of learners 1-2
    # differ clearly from weights computed from learner 2 alone.
    s2 = learners[1] @ learners[1].T
    same = labels[:, None] == labels[None, :]
    from_second_only = np.vectorize(naive_binomial_weight)(s2, same)
    assert np.max(np.abs(from_second_only - expected_weights[2])[off_diagonal]) > 0.05
