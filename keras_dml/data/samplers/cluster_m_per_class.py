"""`ClusterMPerClassSampler`: class-balanced batches drawn from one cluster at a time (D&C)."""

import logging

import numpy as np

from keras_dml.data.samplers._class_pool import (
    ClassPool,
    group_by_class,
    validate_batch_shape,
    validate_labels,
)
from keras_dml.data.samplers.epoch_seeds import check_epoch, check_seed, epoch_generator

logger = logging.getLogger(__name__)

_EPOCH_LENGTHS = ("max", "min")
_SMALL_CLUSTER_POLICIES = ("shrink", "raise")


class ClusterMPerClassSampler:
    """Class-balanced batches drawn from one cluster at a time, round-robin (Divide & Conquer).

    `epoch_batches()` returns `(indices, cluster_id)` tuples; docs/data.md has the rules (epoch
    length, dropped classes, small clusters).

    Args:
        labels: 1-D int array. The class id of every sample.
        clusters: 1-D int array aligned with `labels`. The cluster of every sample, 0..K-1.
        m: int. Images per class in a batch.
        batch_size: int. Images per (full) batch; a multiple of `m`.
        seed: int or `None`. Seed of every epoch's generator (`None`: random). Defaults to `0`.
        min_images_per_class: int. Images a class needs inside a cluster to be sampled there.
            Defaults to `2`.
        epoch_length: `"max"`, `"min"` or a positive int. Defaults to `"max"`.
        num_clusters: int or `None`. K. Defaults to `None` (`max(clusters) + 1`).
        small_clusters: `"shrink"` or `"raise"`. Defaults to `"shrink"`.

    Examples:
    >>> labels = np.repeat(np.arange(12), 4)
    >>> clusters = (np.arange(48) >= 24).astype(int)
    >>> sampler = ClusterMPerClassSampler(labels, clusters, m=2, batch_size=8)
    >>> [cluster for _, cluster in sampler.epoch_batches()]
    [0, 1, 0, 1, 0, 1]

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning",
        CVPR 2019, Sec. 3.2 (training each learner on its cluster).
    """

    yields_clusters = True

    def __init__(
        self,
        labels,
        clusters,
        m,
        batch_size,
        seed=0,
        min_images_per_class=2,
        epoch_length="max",
        num_clusters=None,
        small_clusters="shrink",
    ):
        self.labels = validate_labels(labels)
        self.classes_per_batch = validate_batch_shape(m, batch_size)
        self.m = int(m)
        self.batch_size = int(batch_size)
        self.seed = seed
        if (
            not isinstance(min_images_per_class, (int, np.integer))
            or isinstance(min_images_per_class, bool)
            or min_images_per_class < 1
        ):
            raise ValueError(
                "`min_images_per_class` must be a positive integer. "
                f"Received: min_images_per_class={min_images_per_class!r}"
            )
        self.min_images_per_class = int(min_images_per_class)
        is_int = isinstance(epoch_length, (int, np.integer)) and not isinstance(epoch_length, bool)
        if not ((is_int and epoch_length >= 1) or epoch_length in _EPOCH_LENGTHS):
            raise ValueError(
                "`epoch_length` must be 'max', 'min' or a positive int. "
                f"Received: epoch_length={epoch_length!r}"
            )
        self.epoch_length = int(epoch_length) if is_int else epoch_length
        if small_clusters not in _SMALL_CLUSTER_POLICIES:
            raise ValueError(
                f"`small_clusters` must be one of {_SMALL_CLUSTER_POLICIES}. "
                f"Received: small_clusters={small_clusters!r}"
            )
        self.small_clusters = small_clusters
        self._fixed_num_clusters = None if num_clusters is None else int(num_clusters)
        self._seed = check_seed(seed)
        self.epoch = 0
        self.set_clusters(clusters)

    def set_clusters(self, clusters):
        """Replaces the cluster assignment for the next `epoch_batches()` call.

        Raises:
            ValueError: a malformed assignment, or no cluster can form a batch (nothing changes).
        """
        clusters = validate_labels(clusters, name="clusters")
        if clusters.shape != self.labels.shape:
            raise ValueError(
                f"`clusters` must align with `labels`: got {clusters.size} cluster ids for "
                f"{self.labels.size} labels."
            )
        if clusters.min() < 0:
            raise ValueError(f"Cluster ids must be >= 0. Received min id {clusters.min()}.")
        num_clusters = self._fixed_num_clusters or int(clusters.max()) + 1
        if clusters.max() >= num_clusters:
            raise ValueError(
                f"Cluster ids must be < num_clusters={num_clusters}. "
                f"Received max id {clusters.max()}."
            )
        pools, dropped, skipped = {}, {}, []
        usable_sizes = np.zeros((num_clusters,), np.int64)
        order = np.argsort(clusters, kind="stable")
        starts = np.searchsorted(clusters[order], np.arange(num_clusters + 1))
        for k in range(num_clusters):
            _, groups = group_by_class(order[starts[k] : starts[k + 1]], self.labels)
            kept = [g for g in groups if g.size >= self.min_images_per_class]
            dropped[k] = len(groups) - len(kept)
            usable_sizes[k] = sum(g.size for g in kept)
            if len(kept) < 2:
                skipped.append(k)
                continue
            if len(kept) < self.classes_per_batch and self.small_clusters == "raise":
                raise ValueError(
                    f"Cluster {k} has {len(kept)} classes with >= {self.min_images_per_class} "
                    f"images, fewer than batch_size / m = {self.classes_per_batch}, so it cannot "
                    "fill a batch. Use fewer clusters, a smaller batch_size, or "
                    "small_clusters='shrink' to allow smaller batches for such clusters."
                )
            pools[k] = ClassPool(kept, self.m)
        if skipped and self.small_clusters == "raise":
            raise ValueError(
                f"Clusters {skipped} have fewer than 2 classes with >= {self.min_images_per_class} "
                "images and cannot form a batch with negatives. Use fewer clusters or "
                "small_clusters='shrink' to skip them."
            )
        if not pools:
            raise ValueError(
                f"No cluster of the {num_clusters} has 2 or more classes with >= "
                f"{self.min_images_per_class} images, so no batch can be formed."
            )
        self.num_clusters = num_clusters
        self.clusters = clusters
        self.cluster_sizes = np.bincount(clusters, minlength=num_clusters).astype(np.int64)
        self.usable_cluster_sizes = usable_sizes
        self.dropped_per_cluster = dropped
        self.skipped_clusters = skipped
        self._pools = pools
        self._report()

    def _report(self):
        total_dropped = sum(self.dropped_per_cluster.values())
        if total_dropped:
            per_cluster = {k: n for k, n in self.dropped_per_cluster.items() if n}
            logger.warning(
                "ClusterMPerClassSampler: dropped %d class-in-cluster groups with fewer than %d "
                "images (%d images unused); per cluster: %s",
                total_dropped,
                self.min_images_per_class,
                int(self.cluster_sizes.sum() - self.usable_cluster_sizes.sum()),
                per_cluster,
            )
        if self.skipped_clusters:
            logger.warning(
                "ClusterMPerClassSampler: clusters %s have fewer than 2 usable classes and give "
                "no batches this epoch.",
                self.skipped_clusters,
            )

    @property
    def batches_per_cluster(self):
        """dict cluster id -> batches worth of data in that cluster (usable clusters only)."""
        return {
            k: max(1, int(self.usable_cluster_sizes[k]) // self.batch_size) for k in self._pools
        }

    @property
    def num_batches(self):
        """Number of batches `epoch_batches()` returns for the current assignment."""
        if not isinstance(self.epoch_length, str):
            return self.epoch_length
        counts = self.batches_per_cluster.values()
        rounds = max(counts) if self.epoch_length == "max" else min(counts)
        return rounds * len(self._pools)

    def set_epoch(self, epoch):
        """Makes the next `epoch_batches()` call draw epoch `epoch` (int >= 0)."""
        self.epoch = check_epoch(epoch)

    def epoch_batches(self, epoch=None):
        """Returns one epoch: `(int64 indices, cluster_id)` tuples, round-robin over the clusters.

        Args:
            epoch: int or `None`. The epoch to draw. Defaults to `None` (`self.epoch`, then next).
        """
        epoch = self.epoch if epoch is None else check_epoch(epoch)
        self.epoch = epoch + 1
        rng = epoch_generator(self._seed, epoch)
        order = sorted(self._pools)
        for pool in self._pools.values():
            pool.reset()
        batches = []
        for step in range(self.num_batches):
            k = order[step % len(order)]
            batches.append((self._pools[k].draw(rng, self.classes_per_batch), int(k)))
        return batches

    def __len__(self):
        return self.num_batches

    def __iter__(self):
        return iter(self.epoch_batches())

    def __repr__(self):
        return (
            f"ClusterMPerClassSampler(num_clusters={self.num_clusters}, m={self.m}, "
            f"batch_size={self.batch_size}, epoch_length={self.epoch_length!r}, "
            f"num_batches={self.num_batches}, seed={self.seed})"
        )
