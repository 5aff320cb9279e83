"""Match-threshold calibration against a brute-force scan of every threshold."""

import numpy as np
import pytest

from keras_dml.search import EmbeddingIndex, select_threshold


def brute_force_threshold(scores, same, target):
    """Lowest threshold t (among the scores) with precision(score >= t) >= target."""
    best = None
    for t in sorted(set(scores.tolist())):
        predicted = scores >= t
        if same[predicted].mean() >= target:
            best = t if best is None else min(best, t)
    return best


@pytest.mark.parametrize("target", [0.6, 0.8, 0.95])
def test_threshold_matches_brute_force_and_hits_target(target):
    rng = np.random.default_rng(0)
    same = rng.random(400) < 0.4
    scores = np.round(np.where(same, rng.normal(0.7, 0.15, 400), rng.normal(0.3, 0.2, 400)), 2)
    chosen = select_threshold(scores, same, target)
    assert chosen["threshold"] == pytest.approx(brute_force_threshold(scores, same, target))
    predicted = scores >= chosen["threshold"]
    assert same[predicted].mean() >= target
    assert chosen["precision"] == pytest.approx(same[predicted].mean())
    assert chosen["recall"] == pytest.approx(same[predicted].sum() / same.sum())


def test_unreachable_target_is_reported():
    with pytest.raises(ValueError, match=r"best is 0\.5000"):
        select_threshold(np.array([0.9, 0.9]), np.array([True, False]), 0.9)


def test_index_calibrate_pairs_queries_and_match():
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(10, 8))
    labels = np.repeat(np.arange(10), 6)
    gallery = centres[labels] + 0.6 * rng.normal(size=(60, 8))
    index = EmbeddingIndex.from_embeddings(gallery, labels=labels, normalize=True)
    # Pairs: each pair scored by the normalised inner product.
    a, b = rng.integers(0, 60, 300), rng.integers(0, 60, 300)
    same = labels[a] == labels[b]
    chosen = index.calibrate(pairs=(gallery[a], gallery[b], same), target_precision=0.9)
    scores = np.sum(index.embed(gallery[a]) * index.embed(gallery[b]), axis=1)
    assert chosen["threshold"] == pytest.approx(brute_force_threshold(scores, same, 0.9))
    np.testing.assert_array_equal(index.is_match(gallery[a], gallery[b]), scores >= index.threshold)
    # Leave-one-out over the labelled gallery: top-1 neighbour pairs.
    loo = index.calibrate(target_precision=0.95)
    assert loo["precision"] >= 0.95 and loo["num_pairs"] == 60
    queries = centres[[0, 3]] + 0.6 * rng.normal(size=(2, 8))
    result = index.match(queries)
    np.testing.assert_array_equal(result.matched, result.scores[:, 0] >= index.threshold)
    with pytest.raises(ValueError, match="calibrate"):
        EmbeddingIndex.from_embeddings(gallery).match(queries)
