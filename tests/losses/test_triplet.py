"""Triplet loss and its mining strategies against naive per-triplet loops."""

import keras
import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import graph_on_tensorflow


def _distances(x, squared):
    d = np.array([[np.sum((a - b) ** 2) for b in x] for a in x])
    return d if squared else np.sqrt(d)


def _value(d_ap, d_an, margin, soft):
    return np.log1p(np.exp(d_ap - d_an)) if soft else max(0.0, d_ap - d_an + margin)


def _naive(labels, x, margin, mining, soft, squared):
    d = _distances(x, squared)
    n = len(labels)
    terms = []
    for a in range(n):
        positives = [p for p in range(n) if p != a and labels[p] == labels[a]]
        negatives = [q for q in range(n) if labels[q] != labels[a]]
        if not negatives:
            continue
        if mining == "batch-hard":
            if positives:
                d_ap = max(d[a, p] for p in positives)
                terms.append(_value(d_ap, min(d[a, q] for q in negatives), margin, soft))
            continue
        for p in positives:
            if mining == "all":
                terms.extend(_value(d[a, p], d[a, q], margin, soft) for q in negatives)
            else:  # semi-hard
                farther = [d[a, q] for q in negatives if d[a, q] > d[a, p]]
                d_an = min(farther) if farther else max(d[a, q] for q in negatives)
                terms.append(_value(d[a, p], d_an, margin, soft))
    return (np.mean(terms) if terms else 0.0), len(terms)


@pytest.mark.parametrize("mining", ["all", "semi-hard", "batch-hard"])
@pytest.mark.parametrize("soft, squared", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_deterministic_mining_matches_naive_loop(mining, soft, squared, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=9)
    x = (0.5 * rng.normal(size=(9, 4))).astype("float32")
    loss, count = losses.triplet_loss(
        labels, x, 0.3, mining, soft_margin=soft, squared=squared, return_count=True
    )
    expected, expected_count = _naive(labels, x, 0.3, mining, soft, squared)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4, atol=1e-6)
    assert int(count) == expected_count


def test_random_mining_is_reproducible_with_an_int_seed():
    rng = np.random.default_rng(3)
    labels = np.array([0, 0, 1, 1, 2, 2, 3])
    x = rng.normal(size=(7, 4)).astype("float32")
    first = losses.triplet_loss(labels, x, mining="random", seed=11)
    second = losses.triplet_loss(labels, x, mining="random", seed=11)
    assert float(first) == float(second)


def test_random_mining_averages_to_the_uniform_negative_expectation():
    rng = np.random.default_rng(4)
    labels = np.array([0, 0, 1, 1, 2, 2])
    x = rng.normal(size=(6, 3)).astype("float32")
    d = _distances(x, False)
    per_pair = []
    for a in range(6):
        for p in range(6):
            if p != a and labels[p] == labels[a]:
                negs = [q for q in range(6) if labels[q] != labels[a]]
                per_pair.append(np.mean([_value(d[a, p], d[a, q], 0.5, False) for q in negs]))
    expected = np.mean(per_pair)
    seed = keras.random.SeedGenerator(0)
    draw = graph_on_tensorflow(lambda: losses.triplet_loss(labels, x, 0.5, "random", seed=seed))
    values = np.array([float(draw()) for _ in range(300)])
    assert values.std() > 0  # different negatives are drawn
    assert abs(values.mean() - expected) < 4 * values.std() / np.sqrt(len(values)) + 1e-6


def test_random_mining_only_draws_negatives():
    # Anchors of class 0 have exactly one negative (index 3) and anchor 3 has no positive, so
    # drawing anything but that negative would change the loss.
    labels = np.array([0, 0, 0, 1])
    x = np.random.default_rng(5).normal(size=(4, 3)).astype("float32")
    for seed in range(5):
        random = losses.triplet_loss(labels, x, mining="random", seed=seed)
        every = losses.triplet_loss(labels, x, mining="all")
        np.testing.assert_allclose(float(random), float(every), rtol=1e-5)


def test_class_rejects_bad_arguments():
    with pytest.raises(ValueError, match="mining"):
        losses.TripletLoss(mining="hardest")
    with pytest.raises(ValueError, match="margin"):
        losses.TripletLoss(margin=-1.0)
