import json
import os

import numpy as np
import pytest

from keras_dml.methods.hierarchical_divide_and_conquer.division import recluster, split_clusters
from keras_dml.methods.hierarchical_divide_and_conquer.presets import list_presets, preset_config
from tests.support.configs import config_dict
from tests.support.paths import REPO_ROOT

KMEANS = {"niter": 20, "nredo": 1}


def blobs(num_blobs, classes_per_blob=2, per_class=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((num_blobs, 4)) * 20.0
    labels = np.repeat(np.arange(num_blobs * classes_per_blob), per_class)
    blob = labels // classes_per_blob
    return (centers[blob] + rng.standard_normal((labels.size, 4))).astype("float32"), labels, blob


def test_recluster_keeps_learner_identity_under_permutation():
    vectors, labels, blob = blobs(3)
    previous = np.array([2, 0, 1])[blob]  # learner ids in an arbitrary order
    assignment = recluster(vectors, labels, 3, previous=previous, seed=1, **KMEANS)
    np.testing.assert_array_equal(assignment, previous)
    assert recluster(vectors, labels, 1).tolist() == [0] * labels.size


def test_split_numbers_children_2c_2c_plus_1():
    vectors, labels, blob = blobs(4)
    assignment = blob // 2  # two clusters, each the union of two blobs
    new, parents, unsplit = split_clusters(vectors, labels, assignment, 4, **KMEANS)
    assert parents.tolist() == [0, 0, 1, 1] and unsplit == []
    for child in range(4):
        members = new == child
        assert np.all(assignment[members] == parents[child])
        assert len(np.unique(blob[members])) == 1  # 2-means separated the blobs


def test_unsplittable_cluster_stays_whole_and_budget_is_respected():
    vectors, labels, blob = blobs(3)
    # cluster 0: blobs 0+1 (4 classes, splittable); cluster 1: blob 2 with 2 classes only
    assignment = (blob == 2).astype(int)
    new, parents, unsplit = split_clusters(vectors, labels, assignment, 4, attempts=3, **KMEANS)
    assert parents.tolist() == [0, 0, 1] and unsplit == [1]
    np.testing.assert_array_equal(new[blob == 2], 2)
    new, parents, _ = split_clusters(vectors, labels, blob // 2, 3, **KMEANS)
    assert len(parents) == 3  # budget of one split: the larger cluster 0 is split
    assert parents.tolist() == [0, 0, 1]
    _, parents, unsplit = split_clusters(
        vectors, labels, blob // 2, 4, splittable=[False, True], **KMEANS
    )
    assert parents.tolist() == [0, 1] and unsplit == [1]  # 0 not allowed, 1 too small
    with pytest.raises(ValueError, match="max_clusters"):
        split_clusters(vectors, labels, blob, 2)


def test_identical_points_are_split_by_whole_classes():
    """No 2-means of identical points is acceptable; the balanced class split still is."""
    labels = np.repeat(np.arange(4), 2)
    new, parents, unsplit = split_clusters(
        np.zeros((8, 2), "float32"), labels, np.zeros(8, int), 2, attempts=2, **KMEANS
    )
    assert parents.tolist() == [0, 0] and unsplit == []
    assert sorted(np.bincount(new).tolist()) == [4, 4]
    assert all(np.unique(new[labels == c]).size == 1 for c in range(4))


@pytest.mark.parametrize("name", list_presets())
def test_preset_configs_match_json(name):
    path = os.path.join(REPO_ROOT, "recipes", "configs", f"hdc_{name}.json")
    with open(path) as f:
        stored = json.load(f)
    assert stored == preset_config(name)
    config_dict(stored)
