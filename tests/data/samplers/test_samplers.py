"""Tests of the batch samplers: batch composition over many batches, epochs, errors."""

import collections
import logging

import numpy as np
import pytest

from keras_dml.data.samplers import ClusterMPerClassSampler, MPerClassSampler


def _mixed_labels():
    """30 classes of 6 images, 5 classes of 3 images (< m=4), 4 singletons."""
    sizes = [6] * 30 + [3] * 5 + [1] * 4
    labels = np.repeat(np.arange(len(sizes)), sizes)
    return np.random.default_rng(1).permutation(labels)


def _check_batch(batch, labels, m, classes_per_batch, sizes):
    assert batch.dtype == np.int64 and batch.ndim == 1
    counts = collections.Counter(labels[batch].tolist())
    assert len(counts) == classes_per_batch
    assert set(counts.values()) == {m}
    for cls in counts:
        members = batch[labels[batch] == cls]
        if sizes[cls] >= m:
            assert np.unique(members).size == m, "duplicate image of a class with >= m images"
        else:  # all images of a small class, topped up with replacement
            assert np.unique(members).size == sizes[cls]


def test_m_per_class_composition_over_many_batches():
    labels = _mixed_labels()
    sizes = np.bincount(labels)
    with pytest.warns(UserWarning, match="4 of 39 classes have a single image"):
        sampler = MPerClassSampler(labels, m=4, batch_size=32, seed=3)
    usable = int(sizes[sizes >= 2].sum())
    assert sampler.num_batches == usable // 32
    assert sampler.num_excluded_classes == 4
    class_visits = collections.Counter()
    image_uses = collections.Counter()
    for _ in range(20):
        batches = sampler.epoch_batches()
        assert len(batches) == sampler.num_batches
        for batch in batches:
            assert batch.shape == (32,)
            _check_batch(batch, labels, 4, 8, sizes)
            assert np.all(sizes[labels[batch]] >= 2), "a singleton class was sampled"
            class_visits.update(set(labels[batch].tolist()))
            image_uses.update(batch[sizes[labels[batch]] >= 4].tolist())
    visits = np.array(list(class_visits.values()))
    assert len(class_visits) == 35 and visits.max() - visits.min() <= 1
    for cls in np.flatnonzero(sizes == 6):
        uses = [image_uses[i] for i in np.flatnonzero(labels == cls)]
        assert max(uses) - min(uses) <= 1, "images of a class are not used in cycles"


def test_m_per_class_is_seeded_and_advances():
    labels = np.repeat(np.arange(20), 5)
    a = MPerClassSampler(labels, m=2, batch_size=10, seed=7)
    b = MPerClassSampler(labels, m=2, batch_size=10, seed=7)
    c = MPerClassSampler(labels, m=2, batch_size=10, seed=8)
    first_a, first_b, first_c = a.epoch_batches(), b.epoch_batches(), c.epoch_batches()
    assert all(np.array_equal(x, y) for x, y in zip(first_a, first_b))
    assert not all(np.array_equal(x, y) for x, y in zip(first_a, first_c))
    second_a = a.epoch_batches()
    assert not all(np.array_equal(x, y) for x, y in zip(first_a, second_a))
    assert len(MPerClassSampler(labels, 2, 10, num_batches=3).epoch_batches()) == 3


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"m": 3, "batch_size": 10}, "multiple of `m`"),
        ({"m": 2, "batch_size": 50}, "at least batch_size / m = 25 classes"),
        ({"m": 0, "batch_size": 10}, "positive integer"),
        ({"m": 2, "batch_size": 10, "num_batches": 0}, "num_batches"),
    ],
)
def test_m_per_class_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MPerClassSampler(np.repeat(np.arange(20), 5), **kwargs)


def test_m_per_class_rejects_bad_labels():
    with pytest.raises(ValueError, match="1-D"):
        MPerClassSampler(np.zeros((4, 2), int), m=2, batch_size=4)
    with pytest.raises(ValueError, match="integer ids"):
        MPerClassSampler(np.array([0.5, 1.0, 1.0, 0.5]), m=2, batch_size=4)


def _clustered_data():
    """3 clusters: cluster c holds classes 10c..10c+9 with 4 images each."""
    labels = np.repeat(np.arange(30), 4)
    clusters = labels // 10
    order = np.random.default_rng(0).permutation(labels.size)
    return labels[order], clusters[order]


def test_cluster_sampler_single_cluster_round_robin_batches():
    labels, clusters = _clustered_data()
    sampler = ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8, seed=0)
    assert sampler.yields_clusters
    np.testing.assert_array_equal(sampler.cluster_sizes, [40, 40, 40])
    assert sampler.num_batches == 5 * 3
    for _ in range(10):
        batches = sampler.epoch_batches()
        assert [k for _, k in batches] == [0, 1, 2] * 5
        for indices, k in batches:
            assert isinstance(k, int)
            assert np.all(clusters[indices] == k), "a batch mixes clusters"
            _check_batch(indices, labels, 2, 4, np.bincount(labels))


def test_cluster_sampler_epoch_length_options():
    labels = np.repeat(np.arange(30), 4)
    clusters = np.where(labels < 20, 0, 1)  # 80 and 40 images
    kwargs = {"m": 2, "batch_size": 8}
    assert ClusterMPerClassSampler(labels, clusters, **kwargs).num_batches == 10 * 2
    assert ClusterMPerClassSampler(labels, clusters, epoch_length="min", **kwargs).num_batches == 10
    sampler = ClusterMPerClassSampler(labels, clusters, epoch_length=7, **kwargs)
    assert [k for _, k in sampler.epoch_batches()] == [0, 1, 0, 1, 0, 1, 0]
    with pytest.raises(ValueError, match="epoch_length"):
        ClusterMPerClassSampler(labels, clusters, epoch_length="mean", **kwargs)


def test_set_clusters_takes_effect_between_epochs():
    labels, clusters = _clustered_data()
    sampler = ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8, seed=0)
    sampler.epoch_batches()
    new_clusters = (labels % 2).astype(np.int64)  # 2 clusters, split by class parity
    sampler.set_clusters(new_clusters)
    assert sampler.num_clusters == 2 and sampler.num_batches == 2 * 7
    for indices, k in sampler.epoch_batches():
        assert np.all(new_clusters[indices] == k)
    with pytest.raises(ValueError, match="align"):
        sampler.set_clusters(new_clusters[:-1])
    for indices, k in sampler.epoch_batches():  # failed update keeps the previous assignment
        assert np.all(new_clusters[indices] == k)


def test_dropped_classes_are_counted_and_logged(caplog):
    labels = np.repeat(np.arange(12), 4)
    clusters = np.repeat([0, 1], 24)
    # Move one image of classes 0 and 1 into cluster 1: a single image per class there.
    moved = [np.flatnonzero(labels == 0)[0], np.flatnonzero(labels == 1)[0]]
    clusters[moved] = 1
    with caplog.at_level(logging.WARNING):
        sampler = ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8)
    assert sampler.dropped_per_cluster == {0: 0, 1: 2}
    assert "dropped 2 class-in-cluster groups" in caplog.text
    for _ in range(5):
        for indices, _k in sampler.epoch_batches():
            assert not set(indices.tolist()) & set(int(i) for i in moved)


def test_small_cluster_shrinks_or_raises():
    labels = np.repeat(np.arange(10), 4)
    clusters = np.where(labels < 8, 0, 1)  # cluster 1: 2 classes < batch_size / m = 4
    sampler = ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8)
    sizes = {k: {len(idx)} for idx, k in sampler.epoch_batches()}
    assert sizes == {0: {8}, 1: {4}}
    with pytest.raises(ValueError, match="Cluster 1 has 2 classes"):
        ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8, small_clusters="raise")


def test_clusters_without_negatives_are_skipped(caplog):
    labels = np.repeat(np.arange(10), 4)
    clusters = np.where(labels < 9, 0, 2)  # cluster 1 empty, cluster 2 has one class
    with caplog.at_level(logging.WARNING):
        sampler = ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8)
    assert sampler.skipped_clusters == [1, 2]
    assert "clusters [1, 2]" in caplog.text
    assert {k for _, k in sampler.epoch_batches()} == {0}
    with pytest.raises(ValueError, match="No cluster"):
        ClusterMPerClassSampler(labels, labels, m=2, batch_size=8)


def test_cluster_sampler_argument_errors():
    labels = np.repeat(np.arange(10), 4)
    with pytest.raises(ValueError, match=">= 0"):
        ClusterMPerClassSampler(labels, labels - 1, m=2, batch_size=8)
    with pytest.raises(ValueError, match="< num_clusters=2"):
        ClusterMPerClassSampler(labels, labels % 3, m=2, batch_size=8, num_clusters=2)
    with pytest.raises(ValueError, match="multiple of `m`"):
        ClusterMPerClassSampler(labels, labels % 2, m=3, batch_size=8)
