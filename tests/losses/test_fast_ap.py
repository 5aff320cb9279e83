"""FastAP (a list-wise loss treated as a pair loss): a naive loop, conventions."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks
from tests.support.backend_utils import value_and_gradients


def _naive(labels, x, num_bins):
    """Per query with a positive: soft histograms (Eq. 10), FastAP (Eq. 6); mean of 1 - AP."""
    x = np.asarray(x, "float64")
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    width = 4.0 / num_bins
    centers = [b * width for b in range(num_bins + 1)]
    terms, count = [], 0
    for i in range(len(labels)):
        pos_hist, neg_hist = [0.0] * len(centers), [0.0] * len(centers)
        num_pos = num_neg = 0
        for j in range(len(labels)):
            if j == i:
                continue
            distance = float(np.sum((x[i] - x[j]) ** 2))
            hist = pos_hist if labels[j] == labels[i] else neg_hist
            for b, center in enumerate(centers):
                hist[b] += max(0.0, 1.0 - abs(distance - center) / width)
            num_pos += labels[j] == labels[i]
            num_neg += labels[j] != labels[i]
        if num_pos == 0:
            continue
        ap, cumulative_pos, cumulative_all = 0.0, 0.0, 0.0
        for b in range(len(centers)):
            cumulative_pos += pos_hist[b]
            cumulative_all += pos_hist[b] + neg_hist[b]
            if pos_hist[b] > 0 and cumulative_all > 0:
                ap += pos_hist[b] * cumulative_pos / cumulative_all
        terms.append(1.0 - ap / num_pos)
        count += num_pos + num_neg
    return float(np.mean(terms)), count


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("num_bins", [10, 3])
def test_matches_naive_loop(seed, num_bins):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=9)
    labels[-1] = 7  # a query without positives: left out of the mean
    x = rng.normal(size=(9, 5))
    loss, count = losses.fast_ap_loss(
        labels, x.astype("float32"), num_bins=num_bins, return_count=True
    )
    expected, expected_count = _naive(labels, x, num_bins)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_perfect_ranking_gives_a_small_loss_and_a_reversed_one_a_large_loss():
    base = np.eye(4, dtype="float32")
    labels = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    good = np.repeat(base, 2, axis=0) + 0.01 * np.arange(8)[:, None]
    bad = np.concatenate([base, base])  # each sample's positive is the farthest one
    bad[4:] *= -1.0
    bad = bad[[0, 4, 1, 5, 2, 6, 3, 7]]
    assert float(losses.fast_ap_loss(labels, good)) < 0.01
    assert float(losses.fast_ap_loss(labels, bad)) > 0.6


# `gradients_are_finite` expects a positive loss on duplicated embeddings, where FastAP's ranking
# is perfect (loss 0): `test_gradients_are_finite` below checks FastAP's version.
CHECKS = [c for c in checks.LOSS_CHECKS if c is not checks.gradients_are_finite]


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
def test_conventions(check):
    check(losses.FastAPLoss(num_bins=10))


def test_gradients_are_finite():
    """A regular batch, and duplicates (distance 0) shared by a positive and a negative."""
    labels, x = checks.batch()
    ties = np.repeat(x[:4], 2, axis=0)
    tie_labels = np.array([0, 0, 1, 2, 2, 3, 3, 1])  # samples 3 and 2 tie with their negatives
    loss_obj = losses.FastAPLoss(num_bins=10)
    for embeddings, y in ((x, labels), (ties, tie_labels)):
        loss, (gradient,) = value_and_gradients(lambda e, y=y: loss_obj(y, e), [embeddings])
        assert np.isfinite(float(loss)) and float(loss) > 0.0
        assert np.all(np.isfinite(gradient)) and np.abs(gradient).sum() > 0.0


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.fast_ap_loss, num_bins=10)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_inf_embeddings_give_nan(bad):
    labels, x = checks.batch()
    x[2, 3] = bad
    assert np.isnan(float(losses.fast_ap_loss(labels, x)))


def test_registered_as_a_pair_loss_with_the_papers_bins():
    loss = losses.get("fast-ap")
    assert type(loss) is losses.FastAPLoss and loss.num_bins == 10
    assert not losses.is_class_loss(loss)


@pytest.mark.parametrize("num_bins", [0, 2.5, True])
def test_bad_num_bins_is_a_one_line_error(num_bins):
    with pytest.raises(ValueError, match=rf"`num_bins` must be an integer >= 1.*={num_bins}$"):
        losses.FastAPLoss(num_bins=num_bins)
