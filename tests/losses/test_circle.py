"""Circle loss (Sun et al. 2020, pair-wise labels): a naive loop, constant weights."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks
from tests.support.backend_utils import gradients


def _naive(labels, x, margin, gamma, weights_from=None):
    """Per anchor log(1 + sum_n e^{g a_n (s_n - m)} sum_p e^{-g a_p (s_p - 1 + m)}), averaged;
    the weights a_p, a_n come from `weights_from` (default: `x`)."""

    def similarities(e):
        e = e / np.linalg.norm(e, axis=1, keepdims=True)
        return e @ e.T

    s = similarities(x)
    s_fixed = s if weights_from is None else similarities(weights_from)
    n = len(labels)
    per_anchor, count = [], 0
    for i in range(n):
        pos = [j for j in range(n) if j != i and labels[j] == labels[i]]
        neg = [k for k in range(n) if labels[k] != labels[i]]
        if not pos or not neg:
            continue
        pos_sum = sum(
            np.exp(-gamma * max(1 + margin - s_fixed[i, j], 0) * (s[i, j] - 1 + margin))
            for j in pos
        )
        neg_sum = sum(
            np.exp(gamma * max(s_fixed[i, k] + margin, 0) * (s[i, k] - margin)) for k in neg
        )
        per_anchor.append(np.log1p(neg_sum * pos_sum))
        count += len(pos) + len(neg)
    return float(np.mean(per_anchor)), count


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("margin, gamma", [(0.4, 80.0), (0.25, 16.0)])
def test_circle_matches_naive_loop(seed, margin, gamma):
    rng = np.random.default_rng(seed)
    labels = np.append(rng.integers(0, 3, size=8), 7)  # class 7: an anchor without positive
    x = rng.normal(size=(9, 5))
    loss, count = losses.circle_loss(
        labels, x.astype("float32"), margin=margin, gamma=gamma, return_count=True
    )
    expected, expected_count = _naive(labels, x, margin, gamma)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_self_paced_weights_are_constants():
    # The gradient is that of the loss with a_p, a_n frozen at the current similarities
    # (Sun et al.: the weights are not back-propagated), checked by central differences.
    rng = np.random.default_rng(3)
    labels = np.array([0, 0, 1, 1, 2, 2])
    x = rng.normal(size=(6, 4))
    (gradient,) = gradients(
        lambda e: losses.circle_loss(labels, e, margin=0.25, gamma=4.0), [x.astype("float32")]
    )
    numeric = np.zeros_like(x)
    step = 1e-6
    for index in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[index] += step
        down[index] -= step
        numeric[index] = (
            _naive(labels, up, 0.25, 4.0, weights_from=x)[0]
            - _naive(labels, down, 0.25, 4.0, weights_from=x)[0]
        ) / (2 * step)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.CircleLoss(margin=0.25, gamma=32.0))


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.circle_loss, margin=0.25, gamma=32.0)


def test_bad_gamma_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"`gamma` must be > 0.*gamma=0$"):
        losses.CircleLoss(gamma=0)
