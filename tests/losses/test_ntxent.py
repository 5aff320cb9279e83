"""NT-Xent (SimCLR): a naive loop, the conventions of the pair losses."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks


def _naive(labels, x, temperature):
    """Per positive pair, -log(e^{s_ij/t} / (e^{s_ij/t} + sum_{negatives k} e^{s_ik/t}))."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    s = x @ x.T / temperature
    terms, count = [], 0
    for i in range(len(labels)):
        negatives = [s[i, k] for k in range(len(labels)) if labels[k] != labels[i]]
        positives = [j for j in range(len(labels)) if j != i and labels[j] == labels[i]]
        for j in positives:
            terms.append(-np.log(np.exp(s[i, j]) / (np.exp(s[i, j]) + np.exp(negatives).sum())))
        # the pairs used: each positive pair, and the negatives of anchors with a positive
        count += len(positives) + (len(negatives) if positives else 0)
    return float(np.mean(terms)), count


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("temperature", [0.07, 0.5])
def test_ntxent_matches_naive_loop(seed, temperature):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=9)
    x = rng.normal(size=(9, 5))
    loss, count = losses.ntxent_loss(
        labels, x.astype("float32"), temperature=temperature, return_count=True
    )
    expected, expected_count = _naive(labels, x, temperature)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_two_views_per_image_is_simclr_eq_1():
    # SimCLR's batch: two views per image, one positive per anchor, 2N - 2 negatives.
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 6)).astype("float32")
    labels = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    z = x / np.linalg.norm(x, axis=1, keepdims=True)
    s = z @ z.T / 0.5
    terms = [
        -np.log(np.exp(s[i, (i + 4) % 8]) / sum(np.exp(s[i, k]) for k in range(8) if k != i))
        for i in range(8)
    ]
    np.testing.assert_allclose(float(losses.ntxent_loss(labels, x, 0.5)), np.mean(terms), rtol=1e-5)


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.NTXentLoss(temperature=0.1))


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.ntxent_loss, temperature=0.1)


def test_small_temperature_is_numerically_stable():
    x = np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]], "float32")
    loss = losses.ntxent_loss([0, 0, 1, 1], x, temperature=1e-3)
    assert np.isfinite(float(loss))


def test_bad_temperature_is_a_one_line_error():
    with pytest.raises(ValueError, match=r"`temperature` must be > 0.*temperature=0.0$"):
        losses.NTXentLoss(temperature=0.0)


def test_pair_mask_of_the_wrong_shape_is_a_one_line_error():
    labels, x = checks.batch()
    with pytest.raises(
        ValueError, match=r"`pair_mask` must be a \[batch_size, batch_size\].*8 labels$"
    ):
        losses.ntxent_loss(labels, x, pair_mask=np.ones((8, 7), bool))
