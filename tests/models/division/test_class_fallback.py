"""Divisions with few images per class: k-means over class means when k-means over samples fails."""

import warnings

import numpy as np
import pytest

from keras_dml.methods.divide_and_conquer.chief_division import cluster_division
from keras_dml.methods.division.class_fallback import divide_samples, kmeans_by_class
from keras_dml.methods.division.clustering import (
    ClusteringError,
    kmeans,
    usable_classes_per_cluster,
)
from keras_dml.methods.hierarchical_divide_and_conquer.division import recluster, split_clusters

KMEANS = {"nredo": 5, "niter": 50}  # the best of 5 runs finds the split along x


def split_pairs(num_classes=8, seed=0):
    """2 images per class, far apart along x; the classes form two groups along y.

    k-means over samples splits along x, so every cluster holds one image of each class (no
    positive pair anywhere); the class means lie on y = +-1 and separate into the two groups.
    """
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(num_classes), 2)
    group = np.where(labels < num_classes // 2, 1.0, -1.0)
    side = np.tile([10.0, -10.0], num_classes)
    vectors = np.stack([side, group], axis=1) + rng.normal(scale=0.05, size=(labels.size, 2))
    return vectors.astype("float32"), labels


def classes_are_whole(assignment, labels):
    return all(np.unique(assignment[labels == c]).size == 1 for c in np.unique(labels))


def test_sample_kmeans_fails_on_split_pairs():
    """The data the fallback exists for: the papers' check rejects every sample partition."""
    vectors, labels = split_pairs()
    with pytest.raises(ClusteringError):
        kmeans(
            vectors,
            2,
            min_cluster_size=2,
            accept=lambda a: usable_classes_per_cluster(a, labels, 2).min() >= 2,
            **KMEANS,
        )


def test_divide_samples_falls_back_to_class_means():
    vectors, labels = split_pairs()
    assignment, by_class = divide_samples(vectors, labels, 2, **KMEANS)
    assert by_class
    assert classes_are_whole(assignment, labels)
    groups = {tuple(np.unique(labels[assignment == k])) for k in range(2)}
    assert groups == {(0, 1, 2, 3), (4, 5, 6, 7)}
    assert usable_classes_per_cluster(assignment, labels, 2).min() >= 2


def test_divide_samples_keeps_the_papers_sample_clustering_when_it_works():
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(8), 4)
    centers = rng.normal(size=(8, 3)) * 10
    vectors = (centers[labels] + rng.normal(scale=0.1, size=(32, 3))).astype("float32")
    assignment, by_class = divide_samples(vectors, labels, 2, seed=3, **KMEANS)
    assert not by_class
    expected = kmeans(
        vectors,
        2,
        seed=3,
        min_cluster_size=2,
        accept=lambda a: usable_classes_per_cluster(a, labels, 2).min() >= 2,
        **KMEANS,
    )
    np.testing.assert_array_equal(assignment, expected)


def test_kmeans_by_class_places_single_image_classes_by_their_nearest_centroid():
    vectors, labels = split_pairs()
    # Class 8 has one image, near the y = -1 group's class means.
    vectors = np.concatenate([vectors, [[0.0, -1.2]]]).astype("float32")
    labels = np.concatenate([labels, [8]])
    assignment = kmeans_by_class(vectors, labels, 2, **KMEANS)
    assert classes_are_whole(assignment, labels)
    assert assignment[-1] == assignment[labels == 4][0]


def test_too_few_classes_keep_the_sample_level_error():
    vectors, labels = split_pairs(num_classes=3)
    with pytest.raises(ClusteringError, match="3 classes have 2 or more samples; 2 clusters"):
        kmeans_by_class(vectors, labels, 2, **KMEANS)
    with pytest.raises(ClusteringError, match="no acceptable partition"):
        divide_samples(vectors, labels, 2, max_attempts=2, **KMEANS)


def test_dc_division_uses_the_fallback_and_logs_it_without_a_warning():
    vectors, labels = split_pairs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        outcome = cluster_division(vectors, labels, 2, None, 0, 0, kmeans_options=KMEANS)
    assert "error" not in outcome
    assert classes_are_whole(outcome["assignment"], labels)
    assert outcome["entry"]["by_class"] is True


def test_hierarchical_division_uses_the_fallback():
    vectors, labels = split_pairs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assignment = recluster(vectors, labels, 2, **KMEANS)
    assert classes_are_whole(assignment, labels)
    # The bisecting step splits one cluster of split pairs by its class means too.
    new, parents, unsplit = split_clusters(
        vectors, labels, np.zeros(labels.size, np.int64), 2, attempts=2, **KMEANS
    )
    assert unsplit == [] and parents.tolist() == [0, 0]
    assert classes_are_whole(new, labels)
