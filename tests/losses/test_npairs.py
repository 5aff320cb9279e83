"""Multi-class N-pair loss (Sohn 2016): a naive loop, the tuple choice, conventions."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks


def _naive(labels, x):
    """First and second sample of each class with two or more; softmax over the positives."""
    pairs = []
    for label in dict.fromkeys(labels.tolist()):  # classes in order of first appearance
        members = [i for i in range(len(labels)) if labels[i] == label]
        if len(members) >= 2:
            pairs.append(members[:2])
    anchors = x[[a for a, _ in pairs]]
    positives = x[[p for _, p in pairs]]
    logits = anchors @ positives.T
    terms = [
        np.log1p(sum(np.exp(logits[i, j] - logits[i, i]) for j in range(len(pairs)) if j != i))
        for i in range(len(pairs))
    ]
    return float(np.mean(terms)), len(pairs) ** 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_npairs_matches_naive_loop(seed):
    rng = np.random.default_rng(seed)
    labels = np.append(rng.integers(0, 4, size=10), 9)  # class 9: a single sample, unused
    x = rng.normal(size=(11, 5))
    loss, count = losses.npairs_loss(labels, x.astype("float32"), return_count=True)
    expected, expected_count = _naive(labels, x)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_only_the_first_two_samples_of_a_class_count():
    labels = np.array([0, 1, 0, 1, 0, 1])
    x = np.random.default_rng(3).normal(size=(6, 4)).astype("float32")
    moved = x.copy()
    moved[4:] += 10.0  # third samples of both classes
    np.testing.assert_allclose(
        float(losses.npairs_loss(labels, moved)), float(losses.npairs_loss(labels, x)), rtol=1e-6
    )


def test_one_pair_has_no_negative_and_gives_zero():
    loss, count = losses.npairs_loss([0, 0, 1], np.eye(3, 4, dtype="float32"), return_count=True)
    assert float(loss) == 0.0 and int(count) == 0


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.NPairsLoss(normalize_embeddings=True))
