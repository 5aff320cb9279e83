"""A division that cannot fail on few classes: whole classes split by their centroids, balanced.

When no sample-level k-means partition gives every cluster 2 classes with 2 samples,
`divide_samples` splits the classes instead (`kmeans_by_class`), logged as `dc_division_by_class`.
"""

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from keras_dml.methods.division.clustering import (
    ClusteringError,
    kmeans,
    usable_classes_per_cluster,
)


def balanced_assignment(points, centroids):
    """Assigns points to centroids with cluster sizes within one, at least total distance.

    With n points and k centroids every cluster gets `n // k` or `n // k + 1` points (so
    `n % k` clusters get one more; which ones is part of the optimum). It is a transportation
    problem, solved as a linear programme by HiGHS' dual simplex: its constraint matrix is
    totally unimodular, so the vertex it returns is a 0/1 assignment (n * k variables, where a
    linear assignment over n slots would need an n x n matrix: 1 GB for SOP's 11,316 classes).

    Args:
        points: float array `[n, dim]`.
        centroids: float array `[k, dim]`, `k <= n`.

    Returns:
        int64 array `[n]` of cluster ids in `[0, k)`.

    Examples:
    >>> points = np.array([[0.0], [1.0], [2.0], [10.0]])
    >>> balanced_assignment(points, np.array([[1.0], [10.0]])).tolist()
    [0, 0, 1, 1]
    """
    n, k = points.shape[0], centroids.shape[0]
    base, extra = divmod(n, k)
    distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    # Variable i * k + j: point i in cluster j. Each point in one cluster; sizes in [base, base+1].
    one_cluster = sparse.kron(sparse.eye(n), np.ones((1, k)), format="csr")
    sizes = sparse.kron(np.ones((1, n)), sparse.eye(k), format="csr")
    most = base + (1 if extra else 0)
    result = linprog(
        distances.ravel(),
        A_ub=sparse.vstack([sizes, -sizes]),
        b_ub=np.concatenate([np.full(k, most), np.full(k, -base)]),
        A_eq=one_cluster,
        b_eq=np.ones(n),
        bounds=(0, 1),
        method="highs-ds",
    )
    assignment = result.x.reshape(n, k).argmax(axis=1).astype(np.int64)
    counts = np.bincount(assignment, minlength=k)
    if result.status != 0 or counts.min() < base or counts.max() > most:
        raise ClusteringError(
            f"The balanced assignment of {n} classes to {k} clusters failed "
            f"({result.message}); cluster sizes {counts.tolist()}."
        )
    return assignment


def kmeans_by_class(features, labels, k, seed=0, niter=100, **kmeans_options):
    """Balanced k-means over the mean vector of every class: each class whole in one cluster.

    The classes with 2 or more samples are split into `k` clusters whose class counts differ by
    at most one: k-means over the class means gives the starting centroids, then the classes
    are assigned to them in balance (`balanced_assignment`) and the centroids moved to the mean
    of their classes, until the assignment stops changing (at most `niter` rounds). A class with
    a single sample joins the cluster whose centroid is nearest its vector.

    Args:
        features: float array `[N, dim]`. The vectors of the training samples.
        labels: int array `[N]`. Their classes.
        k: int. Number of clusters.
        seed: int. k-means seed. Defaults to `0`.
        niter: int. k-means iterations, and the most balanced rounds. Defaults to `100`.
        **kmeans_options: `nredo`, `max_attempts` of `clustering.kmeans`.

    Returns:
        int64 array `[N]` of cluster ids in `[0, k)`.

    Raises:
        ClusteringError: when fewer than `2 * k` classes have 2 samples.

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
    usable_means = means[usable]
    try:
        start = kmeans(
            usable_means.astype(np.float32), int(k), seed=seed, niter=niter, **kmeans_options
        )
        centroids = np.stack([usable_means[start == c].mean(axis=0) for c in range(int(k))])
    except ClusteringError:  # e.g. duplicate class means leave a cluster empty: k distinct ones
        picks = np.random.default_rng(seed).choice(usable_means.shape[0], int(k), replace=False)
        centroids = usable_means[picks]
    grouped = None
    for _ in range(int(niter)):
        balanced = balanced_assignment(usable_means, centroids)
        if grouped is not None and np.array_equal(balanced, grouped):
            break
        grouped = balanced
        centroids = np.stack([usable_means[grouped == c].mean(axis=0) for c in range(int(k))])
    class_cluster = np.zeros(classes.size, np.int64)
    class_cluster[usable] = grouped
    if not usable.all():
        distances = ((means[~usable, None, :] - centroids[None]) ** 2).sum(axis=-1)
        class_cluster[~usable] = distances.argmin(axis=1)
    return class_cluster[inverse]


def divide_samples(features, labels, k, seed=0, **kmeans_options):
    """The papers' k-means over samples, else balanced k-means over class means (module docstring).

    Args:
        features: float array `[N, dim]`. The vectors of the training samples.
        labels: int array `[N]`. Their classes.
        k: int. Number of clusters.
        seed: int. k-means seed. Defaults to `0`.
        **kmeans_options: `niter`, `nredo`, `max_attempts` of `clustering.kmeans`.

    Returns:
        `(assignment, by_class)`: int64 cluster ids `[N]` in which every cluster holds 2 classes
        with 2 samples, and whether the balanced class-mean fallback gave them.

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
