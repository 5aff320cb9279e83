"""A division that keeps working when a class has only a few images: k-means over class means.

Divide & Conquer (and its hierarchical extension) cluster the training *samples*; a cluster is
usable when it holds 2 classes with 2 samples each (a positive pair and a negative). With few
images per class (2-5, as in many retrieval sets) k-means often sends the images of one class to
different clusters, and on a small training set no partition may pass the check: the run stopped
with a `ClusteringError`. `divide_samples` then falls back to clustering the class means, which
puts every class whole into one cluster, so every cluster with 2 classes is usable. Whenever the
sample-level clustering succeeds, the result is the papers' (unchanged).
"""

import numpy as np

from keras_dml.models.division.clustering import (
    ClusteringError,
    kmeans,
    usable_classes_per_cluster,
)


def kmeans_by_class(features, labels, k, seed=0, **kmeans_options):
    """k-means over the mean vector of every class: each class lands whole in one cluster.

    Classes with 2 or more samples are clustered into `k` groups of at least 2 classes; a class
    with a single sample joins the cluster whose centroid is nearest its vector.

    Args:
        features: float array `[N, dim]`. The vectors of the training samples.
        labels: int array `[N]`. Their classes.
        k: int. Number of clusters.
        seed: int. k-means seed. Defaults to `0`.
        **kmeans_options: `niter`, `nredo`, `max_attempts`, `backend` of `clustering.kmeans`.

    Returns:
        int64 array `[N]` of cluster ids in `[0, k)`.

    Raises:
        ClusteringError: when fewer than `2 * k` classes have 2 samples, or k-means fails.

    Examples:
    >>> x = np.array([[0, 0], [9, 9], [0, 1], [9, 8], [5, 5], [5, 6], [6, 5], [6, 6]], "float32")
    >>> kmeans_by_class(x, np.array([0, 0, 1, 1, 2, 2, 3, 3]), 2).tolist()[::2] in (
    ...     [0, 0, 1, 1], [1, 1, 0, 0])
    True
    """
    features = np.asarray(features, np.float64)
    labels = np.asarray(labels)
    classes, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    usable = counts >= 2
    if int(usable.sum()) < 2 * int(k):
        raise ClusteringError(
            f"{int(usable.sum())} classes have 2 or more samples; {k} clusters need {2 * k}."
        )
    means = np.zeros((classes.size, features.shape[1]))
    np.add.at(means, inverse, features)
    means /= counts[:, None]
    grouped = kmeans(
        means[usable].astype(np.float32), int(k), seed=seed, min_cluster_size=2, **kmeans_options
    )
    class_cluster = np.zeros(classes.size, np.int64)
    class_cluster[usable] = grouped
    if not usable.all():
        centroids = np.stack([means[usable][grouped == c].mean(axis=0) for c in range(int(k))])
        distances = ((means[~usable, None, :] - centroids[None]) ** 2).sum(axis=-1)
        class_cluster[~usable] = distances.argmin(axis=1)
    return class_cluster[inverse]


def divide_samples(features, labels, k, seed=0, **kmeans_options):
    """The papers' k-means over samples, else k-means over class means (see module docstring).

    Args:
        features: float array `[N, dim]`. The vectors of the training samples.
        labels: int array `[N]`. Their classes.
        k: int. Number of clusters.
        seed: int. k-means seed. Defaults to `0`.
        **kmeans_options: `niter`, `nredo`, `max_attempts`, `backend` of `clustering.kmeans`.

    Returns:
        `(assignment, by_class)`: int64 cluster ids `[N]` in which every cluster holds 2 classes
        with 2 samples, and whether the class-mean fallback gave them.

    Raises:
        ClusteringError: the sample-level error, when the fallback fails too.

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2 (k-means of the samples in the embedding space).
    """
    labels = np.asarray(labels)

    def accept(assignment):
        return usable_classes_per_cluster(assignment, labels, k).min() >= 2

    try:
        assignment = kmeans(
            features, k, seed=seed, min_cluster_size=2, accept=accept, **kmeans_options
        )
        return assignment, False
    except ClusteringError as sample_error:
        try:
            return kmeans_by_class(features, labels, k, seed=seed, **kmeans_options), True
        except ClusteringError:
            raise sample_error from None
