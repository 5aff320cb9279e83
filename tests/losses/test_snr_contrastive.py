"""SNR contrastive loss (Yuan et al. 2019, DSML): a naive loop, conventions."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks


def _naive(labels, x, margin, regularization, normalize_by):
    """d_ij = var(x_j - x_i) / var(x_i); mean positive d + mean negative [m - d]_+."""
    n = len(labels)
    positive, negative = [], []
    for i in range(n):
        for j in range(n):
            d = np.var(x[j] - x[i]) / np.var(x[i])
            if i != j and labels[i] == labels[j]:
                positive.append(d)
            elif labels[i] != labels[j]:
                negative.append(max(margin - d, 0.0))

    def mean(values):
        if normalize_by == "nonzero":
            values = [v for v in values if v > 0.0]
        return float(np.mean(values)) if values else 0.0

    penalty = regularization * np.mean(np.abs(x.sum(axis=1)))
    return mean(positive) + mean(negative) + penalty, len(positive) + len(negative)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize(
    "margin, regularization, normalize_by", [(1.0, 0.0, "nonzero"), (1.5, 0.1, "pairs")]
)
def test_snr_contrastive_matches_naive_loop(seed, margin, regularization, normalize_by):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=9)
    x = rng.normal(size=(9, 5))
    loss, count = losses.snr_contrastive_loss(
        labels,
        x.astype("float32"),
        margin=margin,
        regularization=regularization,
        normalize_by=normalize_by,
        return_count=True,
    )
    expected, expected_count = _naive(labels, x, margin, regularization, normalize_by)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_snr_distance_is_relative_to_the_anchor():
    x = np.array([[1.0, -1.0, 0.0], [2.0, -2.0, 0.0]], "float32")
    d = np.asarray(losses.snr_distances(x))
    np.testing.assert_allclose(d, [[0.0, 1.0], [0.25, 0.0]], atol=1e-6)


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.SNRContrastiveLoss(margin=1.0, regularization=0.01))


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.snr_contrastive_loss, margin=1.0)


def test_bad_arguments_are_one_line_errors():
    with pytest.raises(ValueError, match=r"`regularization` must be >= 0.*=-1$"):
        losses.SNRContrastiveLoss(regularization=-1)
    with pytest.raises(ValueError, match=r"`normalize_by` must be one of"):
        losses.SNRContrastiveLoss(normalize_by="mean")
