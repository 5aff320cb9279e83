"""Divisions that cannot fail: whole classes split by their centroids, balanced, without warning."""

import warnings

import numpy as np
import pytest

from keras_dml.methods.divide_and_conquer.chief_division import cluster_division
from keras_dml.methods.division.class_fallback import divide_samples, kmeans_by_class
from keras_dml.methods.hierarchical_divide_and_conquer.division import recluster, split_clusters

KMEANS = {"nredo": 2, "niter": 50}


def lopsided_pairs(positions=(0.0, 1.0, 2.0, 10.0), seed=0):
    """2 images per class, 20 apart along y; the class means lie on y = 0 at `positions`.

    k-means over the samples splits along y (one image of every class in each cluster, no
    positive pair anywhere); k-means over the 4 class means gives {0, 1, 2} and {10}: a cluster
    of one class, which the old fallback rejected, so the division failed on every seed.
    """
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(len(positions)), 2)
    x = np.asarray(positions, "float64")[labels]
    y = np.tile([10.0, -10.0], len(positions))
    vectors = np.stack([x, y], axis=1) + rng.normal(scale=0.05, size=(labels.size, 2))
    return vectors.astype("float32"), labels


def classes_per_cluster(assignment, labels, k):
    for c in np.unique(labels):
        assert np.unique(assignment[labels == c]).size == 1, f"class {c} is split"
    return sorted(np.unique(labels[assignment == j]).size for j in range(k))


def test_four_classes_divide_into_two_pairs_of_whole_classes_without_warning():
    vectors, labels = lopsided_pairs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outcome = cluster_division(vectors, labels, 2, None, 0, 0, kmeans_options=KMEANS)
    assert "error" not in outcome, outcome.get("error")
    assert classes_per_cluster(outcome["assignment"], labels, 2) == [2, 2]
    assert outcome["entry"]["by_class"] is True
    # Neighbouring centroids share a cluster: {0, 1} and {2, 10} (the cheapest balanced split).
    groups = {tuple(np.unique(labels[outcome["assignment"] == j])) for j in range(2)}
    assert groups == {(0, 1), (2, 3)}


def test_hierarchical_division_of_four_classes_never_warns():
    vectors, labels = lopsided_pairs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assignment = recluster(vectors, labels, 2, **KMEANS)
        new, parents, unsplit = split_clusters(
            vectors, labels, np.zeros(labels.size, np.int64), 2, attempts=2, **KMEANS
        )
    assert classes_per_cluster(assignment, labels, 2) == [2, 2]
    assert unsplit == [] and parents.tolist() == [0, 0]
    assert classes_per_cluster(new, labels, 2) == [2, 2]


@pytest.mark.parametrize("num_classes, k", [(4, 2), (5, 2), (7, 3), (9, 4), (12, 5)])
def test_balanced_sizes_differ_by_at_most_one_class(num_classes, k):
    rng = np.random.default_rng(num_classes)
    # Most class means crowd near 0, one sits far away: plain k-means would isolate it.
    positions = np.concatenate([rng.normal(scale=0.5, size=num_classes - 1), [25.0]])
    vectors, labels = lopsided_pairs(positions)
    assignment, by_class = divide_samples(vectors, labels, k, **KMEANS)
    assert by_class
    sizes = classes_per_cluster(assignment, labels, k)
    assert sizes[-1] - sizes[0] <= 1 and sizes[0] >= 2 and sum(sizes) == num_classes


def test_balanced_partition_is_seeded_and_single_image_classes_join_the_nearest_cluster():
    vectors, labels = lopsided_pairs((0.0, 1.0, 9.0, 10.0))
    vectors = np.concatenate([vectors, [[9.4, 0.0]]]).astype("float32")
    labels = np.concatenate([labels, [4]])
    first = kmeans_by_class(vectors, labels, 2, seed=3, **KMEANS)
    np.testing.assert_array_equal(first, kmeans_by_class(vectors, labels, 2, seed=3, **KMEANS))
    assert classes_per_cluster(first[:-1], labels[:-1], 2) == [2, 2]
    assert first[-1] == first[labels == 2][0]
