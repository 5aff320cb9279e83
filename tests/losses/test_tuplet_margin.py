"""Tuplet margin loss (Yu & Tao 2019): a naive loop with acos, conventions."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks
from tests.support.backend_utils import value_and_gradients


def _naive(labels, x, margin, scale):
    """Per positive pair, log(1 + sum_n exp(s (cos theta_an - cos(theta_ap - beta))))."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    c = np.clip(x @ x.T, -1.0, 1.0)
    n = len(labels)
    terms, count = [], 0
    for a in range(n):
        negatives = [k for k in range(n) if labels[k] != labels[a]]
        positives = [p for p in range(n) if p != a and labels[p] == labels[a]]
        for p in positives:
            shifted = np.cos(np.arccos(c[a, p]) - margin)
            terms.append(np.log1p(sum(np.exp(scale * (c[a, k] - shifted)) for k in negatives)))
        count += len(positives) + (len(negatives) if positives else 0)
    return float(np.mean(terms)), count


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("margin, scale", [(0.1, 64.0), (0.5, 8.0)])
def test_tuplet_margin_matches_naive_loop(seed, margin, scale):
    rng = np.random.default_rng(seed)
    labels = np.append(rng.integers(0, 3, size=8), 7)  # class 7: an anchor without positive
    x = rng.normal(size=(9, 5))
    loss, count = losses.tuplet_margin_loss(
        labels, x.astype("float32"), margin=margin, scale=scale, return_count=True
    )
    expected, expected_count = _naive(labels, x, margin, scale)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_identical_positives_keep_gradients_finite():
    # cos(theta_ap) = 1: acos has an infinite derivative there, the sin/cos form does not.
    x = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]], "float32")
    loss, (gradient,) = value_and_gradients(
        lambda e: losses.tuplet_margin_loss([0, 0, 1, 1], e, margin=0.1, scale=64.0), [x]
    )
    assert np.isfinite(float(loss)) and np.all(np.isfinite(gradient))


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.TupletMarginLoss(margin=0.1, scale=16.0))


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.tuplet_margin_loss, margin=0.1, scale=16.0)


def test_bad_scale_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"`scale` must be > 0.*scale=-2$"):
        losses.TupletMarginLoss(scale=-2)
