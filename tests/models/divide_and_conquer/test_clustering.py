import sys

import numpy as np
import pytest

from keras_dml.evaluation.clustering import cluster_nmi
from keras_dml.methods.division.class_fallback import kmeans_by_class
from keras_dml.methods.division.clustering import (
    ClusteringError,
    cluster_sizes,
    kmeans,
    match_clusters,
    matching_permutation,
    usable_classes_per_cluster,
)


def blobs(k=3, per=20, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, 8)) * 20
    x = np.concatenate([c + rng.normal(size=(per, 8)) for c in centers]).astype("float32")
    return x, np.repeat(np.arange(k), per)


def test_kmeans_recovers_blobs():
    x, truth = blobs()
    assignment = kmeans(x, 3, niter=20, nredo=2, seed=1)
    assert assignment.dtype == np.int64 and assignment.shape == truth.shape
    assert cluster_nmi(truth, assignment) == pytest.approx(1.0)


def test_division_kmeans_is_the_same_with_and_without_faiss(monkeypatch):
    """The division does not depend on the installed extras: one NumPy k-means."""
    pytest.importorskip("faiss")
    x, labels = blobs(k=4, per=30, seed=3)
    x = x + np.random.default_rng(1).normal(scale=15.0, size=x.shape).astype("float32")
    with_faiss = kmeans(x, 4, niter=30, nredo=3, seed=5)
    by_class = kmeans_by_class(x, labels, 2, seed=5, nredo=2)
    monkeypatch.setitem(sys.modules, "faiss", None)  # `import faiss` now raises ImportError
    monkeypatch.setitem(sys.modules, "sklearn.cluster", None)
    np.testing.assert_array_equal(with_faiss, kmeans(x, 4, niter=30, nredo=3, seed=5))
    np.testing.assert_array_equal(by_class, kmeans_by_class(x, labels, 2, seed=5, nredo=2))


def test_kmeans_errors_and_retry():
    x, _ = blobs()
    with pytest.raises(ClusteringError, match="must not exceed"):
        kmeans(x[:2], 3)
    with pytest.raises(ValueError, match="2-D"):
        kmeans(x[0], 2)
    calls = []

    def reject(assignment):
        calls.append(1)
        return False

    with pytest.raises(ClusteringError, match="3 attempts"):
        kmeans(x, 3, niter=5, nredo=1, accept=reject, max_attempts=3)
    assert len(calls) == 3
    # Collapsed data: every point identical cannot give 3 clusters of >= 2 points.
    with pytest.raises(ClusteringError):
        kmeans(np.zeros((6, 2), "float32"), 3, min_cluster_size=2, max_attempts=2, niter=5)
    assert kmeans(x, 1).tolist() == [0] * len(x)


def test_match_clusters_three_cycle_maps_back_exactly():
    previous = np.array([0, 0, 1, 1, 2, 2])
    current = np.array([1, 1, 2, 2, 0, 0])  # a 3-cycle relabelling of the same partition
    np.testing.assert_array_equal(match_clusters(previous, current, 3), previous)
    np.testing.assert_array_equal(matching_permutation([0, 1, 2], [1, 2, 0], 3), [2, 0, 1])
    # The inverted permutation (the reference code's bug) would give [2, 0, 1] here.
    assert match_clusters([0, 1, 2], [1, 2, 0], 3).tolist() == [0, 1, 2]
    assert match_clusters(None, current, 3).tolist() == current.tolist()


def test_match_clusters_follows_successors_and_ignores_unassigned():
    previous = np.array([0, 0, 0, 1, 1, 1, 2, 2, -1])
    current = np.array([2, 2, 1, 0, 0, 0, 1, 1, 0])
    matched = match_clusters(previous, current, 3, similarity="overlap")
    assert matched[:2].tolist() == [0, 0] and matched[3:6].tolist() == [1, 1, 1]
    assert sorted(set(matched.tolist())) == [0, 1, 2]
    with pytest.raises(ValueError, match="same samples"):
        match_clusters([0, 1], [0, 1, 1], 2)
    with pytest.raises(ValueError, match="num_clusters"):
        match_clusters([0, 3], [0, 1], 2)


def test_nmi_and_counts():
    assert cluster_nmi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0, abs=1e-12)
    assert cluster_nmi([0, 0, 0], [1, 1, 1]) == 1.0
    assert cluster_sizes([0, 0, 2], 4).tolist() == [2, 0, 1, 0]
    labels = np.array([0, 0, 1, 2, 2, 3])
    assert usable_classes_per_cluster([0, 0, 0, 1, 1, 1], labels, 2).tolist() == [1, 1]
