"""Margin loss: distance-weighted probabilities, negative selection and the loss, vs naive loops."""

import keras
import numpy as np
import pytest

from keras_dml import losses, miners, pairs
from tests.support.backend_utils import graph_on_tensorflow, to_numpy


def _unit(rng, n, dim):
    x = rng.normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype("float32")


def _dist(x):
    return np.array([[np.linalg.norm(a - b) for b in x] for a in x])


def _naive_probabilities(d, labels, dim, cutoff, nonzero):
    n = len(labels)
    probs = np.zeros((n, n))
    for i in range(n):
        weights = np.zeros(n)
        for k in range(n):
            if labels[k] != labels[i] and d[i, k] < nonzero:
                c = max(d[i, k], cutoff)
                log_q = (dim - 2) * np.log(c) + (dim - 3) / 2 * np.log(1 - c * c / 4)
                weights[k] = np.exp(-log_q)
        if weights.sum() > 0:
            probs[i] = weights / weights.sum()
        else:
            negatives = labels != labels[i]
            probs[i] = negatives / max(negatives.sum(), 1)
    return probs


@pytest.mark.parametrize("dim, nonzero", [(4, 1.4), (16, 1.2), (16, 0.3)])
def test_distance_weighted_probabilities_match_formula(dim, nonzero):
    rng = np.random.default_rng(dim)
    labels = np.array([0, 0, 1, 1, 2, 2, 2, 3])
    x = _unit(rng, 8, dim)
    d = _dist(x)
    probs = to_numpy(
        miners.distance_weighted_probabilities(
            d.astype("float32"), pairs.negative_mask(labels), dim, 0.5, nonzero
        )
    )
    np.testing.assert_allclose(probs, _naive_probabilities(d, labels, dim, 0.5, nonzero), atol=1e-5)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


def test_sampled_negatives_follow_the_probabilities():
    probs = np.array(
        [[0.0, 0.0, 0.2, 0.8], [0.0, 0.0, 0.5, 0.5], [0.7, 0.3, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
        "float32",
    )
    seed = keras.random.SeedGenerator(0)
    draw = graph_on_tensorflow(lambda: miners.sample_negatives(probs, seed=seed))
    counts = np.zeros((4, 4))
    for _ in range(500):
        indices, valid = draw()
        indices = to_numpy(indices)
        for i in range(4):
            np.add.at(counts[i], indices[i], 1)
    assert to_numpy(valid)[:3].all() and not to_numpy(valid)[3].any()
    frequencies = counts[:3] / counts[:3].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(frequencies, probs[:3], atol=0.03)  # 2000 draws per row


def test_closest_negatives_match_loop():
    rng = np.random.default_rng(1)
    labels = np.array([0, 0, 0, 1, 1, 2, 3])
    x = _unit(rng, 7, 3)
    d = _dist(x)
    pos = to_numpy(pairs.positive_mask(labels))
    index, valid = miners.closest_negatives(d.astype("f4"), pos, pairs.negative_mask(labels), 0.5)
    index, valid = to_numpy(index), to_numpy(valid)
    for i in range(7):
        eligible = sorted(
            (d[i, k], k) for k in range(7) if labels[k] != labels[i] and d[i, k] >= 0.5
        )
        rank = 0
        for j in range(7):
            if pos[i, j]:
                assert valid[i, j] == (rank < len(eligible))
                if rank < len(eligible):
                    assert index[i, j] == eligible[rank][1]
                rank += 1


def _naive_margin_closest(labels, x, beta, margin, nu, normalize_by, cutoff=0.5):
    d = _dist(x)
    n = len(labels)
    total, pairs, nonzero, num_pos, num_neg = 0.0, 0, 0, 0, 0
    for i in range(n):
        eligible = sorted(
            (d[i, k], k) for k in range(n) if labels[k] != labels[i] and d[i, k] >= cutoff
        )
        rank = 0
        for j in range(n):
            if j == i or labels[j] != labels[i]:
                continue
            pos_loss = max(0.0, margin + d[i, j] - beta[i])
            total += pos_loss + nu * beta[i]
            pairs, nonzero, num_pos = pairs + 1, nonzero + (pos_loss > 0), num_pos + 1
            if rank < len(eligible):
                neg_loss = max(0.0, margin + beta[i] - eligible[rank][0])
                total += neg_loss + nu * beta[i]
                pairs, nonzero, num_neg = pairs + 1, nonzero + (neg_loss > 0), num_neg + 1
            rank += 1
    if num_pos == 0 or num_neg == 0:
        return 0.0, 0
    return total / max(nonzero if normalize_by == "nonzero" else pairs, 1), pairs


@pytest.mark.parametrize("normalize_by", ["nonzero", "pairs"])
@pytest.mark.parametrize("nu", [0.0, 0.1])
@pytest.mark.parametrize("per_anchor_beta", [False, True])
def test_margin_loss_with_closest_negatives_matches_loop(normalize_by, nu, per_anchor_beta):
    rng = np.random.default_rng(2)
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 3])
    x = _unit(rng, 8, 4)
    beta = rng.uniform(0.8, 1.4, size=8) if per_anchor_beta else np.full(8, 1.2)
    loss, count = losses.margin_loss(
        labels,
        x,
        beta=beta.astype("float32") if per_anchor_beta else 1.2,
        nu=nu,
        sampling="closest",
        normalize_by=normalize_by,
        return_count=True,
    )
    expected, expected_count = _naive_margin_closest(labels, x, beta, 0.2, nu, normalize_by)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4)
    assert int(count) == expected_count


def test_distance_weighted_margin_loss_averages_to_its_expectation():
    rng = np.random.default_rng(3)
    labels = np.array([0, 0, 1, 1, 2, 2])
    dim = 3
    x = _unit(rng, 6, dim)
    d = _dist(x)
    probs = _naive_probabilities(d, labels, dim, 0.5, 1.4)
    beta, margin = 1.2, 0.2
    total, pairs = 0.0, 0
    for i in range(6):
        expected_neg = sum(probs[i, k] * max(0.0, margin + beta - d[i, k]) for k in range(6))
        for j in range(6):
            if j != i and labels[j] == labels[i]:
                total += max(0.0, margin + d[i, j] - beta) + expected_neg
                pairs += 2
    expected = total / pairs
    seed = keras.random.SeedGenerator(0)
    draw = graph_on_tensorflow(
        lambda: losses.margin_loss(labels, x, normalize_by="pairs", seed=seed)
    )
    values = np.array([float(draw()) for _ in range(300)])
    assert values.std() > 0
    assert abs(values.mean() - expected) < 4 * values.std() / np.sqrt(len(values)) + 1e-6


def test_embeddings_are_normalised_by_default():
    rng = np.random.default_rng(4)
    labels = np.array([0, 0, 1, 1])
    x = _unit(rng, 4, 5)
    scaled = losses.margin_loss(labels, 7.0 * x, sampling="closest")
    unit = losses.margin_loss(labels, x, sampling="closest")
    np.testing.assert_allclose(float(scaled), float(unit), rtol=1e-5)


def test_margin_pairs_per_pair_values():
    d = np.array([[0.0, 0.5, 1.5], [0.5, 0.0, 1.0], [1.5, 1.0, 0.0]], "float32")
    pos = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], bool)
    neg = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], bool)
    values = to_numpy(losses.margin_pairs(d, pos, neg, beta=1.2, margin=0.2))
    expected = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.4], [0.0, 0.4, 0.0]]
    np.testing.assert_allclose(values, expected, atol=1e-6)


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="cutoff"):
        losses.MarginLoss(cutoff=1.5, nonzero_loss_cutoff=1.4)
    with pytest.raises(ValueError, match="sampling"):
        losses.MarginLoss(sampling="hard")
    with pytest.raises(ValueError, match="nu"):
        losses.LearnableMarginLoss(nu=-1.0)
