"""The library's one k-means (seeded NumPy Lloyd iterations) and its NMI."""

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

# Distance block of at most this many float32 entries (128 MB) per matrix product.
_BLOCK_ENTRIES = 2**25
# Default restarts: at most this many, together within _RESTART_WORK multiply-adds (N x k x D
# summed over the runs) per iteration.
_MAX_RESTARTS = 10
_RESTART_WORK = 2 * 10**9


def default_restarts(num_points, num_clusters, dim):
    """Runs of `lloyd_kmeans` when `nredo` is `None`: `2e9 // (N * k * D)`, clipped to [1, 10].

    Examples:
    >>> default_restarts(364, 2, 64), default_restarts(60502, 11316, 128)
    (10, 1)
    """
    work = max(1, int(num_points) * int(num_clusters) * int(dim))
    return int(min(_MAX_RESTARTS, max(1, _RESTART_WORK // work)))


def lloyd_kmeans(points, num_clusters, niter=20, nredo=None, seed=0):
    """Clusters `points` `[N, D]` with seeded Lloyd k-means; the best of `nredo` runs.

    Each run starts from `num_clusters` distinct points drawn by `numpy.random.default_rng(seed)`,
    runs up to `niter` iterations and has its inertia compared; `nredo=None` is `default_restarts`.

    Returns:
        `(assignments, inertia)`: int64 cluster ids `[N]` and the float inertia.

    Raises:
        ValueError: `niter` or `nredo` not a positive int, or `num_clusters` outside `[1, N]`.

    Examples:
    >>> x = np.array([[0, 0], [0, 0.1], [5, 5], [5, 5.1]], dtype="float32")
    >>> assignments, inertia = lloyd_kmeans(x, 2)
    >>> bool(assignments[0] == assignments[1] != assignments[2] == assignments[3])
    True

    References:
        Lloyd, "Least squares quantization in PCM", IEEE Trans. Information Theory, 1982.
    """
    points = np.ascontiguousarray(points, dtype=np.float32)
    n = points.shape[0]
    if nredo is None:
        nredo = default_restarts(n, num_clusters, points.shape[1])
    for name, value in (("niter", niter), ("nredo", nredo)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    if not 1 <= num_clusters <= n:
        raise ValueError(
            f"k-means needs 1 <= num_clusters <= number of points ({n}). "
            f"Received: num_clusters={num_clusters}"
        )
    rng = np.random.default_rng(seed)
    squared_norms = np.einsum("ij,ij->i", points, points)
    best = None
    for _ in range(int(nredo)):
        start = points[rng.choice(n, int(num_clusters), replace=False)]
        assignments, inertia = _lloyd(points, squared_norms, start, int(niter))
        if best is None or inertia < best[1]:
            best = (assignments, inertia)
    return best


def _lloyd(points, squared_norms, centroids, niter):
    """One Lloyd run from `centroids`: `(assignments, inertia)` after `niter` mean updates."""
    previous = None
    for _ in range(niter):
        assignments, distances = _nearest(points, squared_norms, centroids)
        if previous is not None and np.array_equal(assignments, previous):
            return assignments, float(np.sum(distances))
        centroids = _means(points, assignments, distances, centroids.shape[0])
        previous = assignments
    assignments, distances = _nearest(points, squared_norms, centroids)
    return assignments, float(np.sum(distances))


def _nearest(points, squared_norms, centroids):
    """Nearest centroid (lowest index on ties) of every point and its squared distance."""
    centroid_norms = np.einsum("ij,ij->i", centroids, centroids)
    rows = max(1, _BLOCK_ENTRIES // centroids.shape[0])
    assignments = np.empty(points.shape[0], np.int64)
    distances = np.empty(points.shape[0], np.float64)
    for begin in range(0, points.shape[0], rows):
        block = centroid_norms[None, :] - 2.0 * (points[begin : begin + rows] @ centroids.T)
        nearest = np.argmin(block, axis=1)
        assignments[begin : begin + rows] = nearest
        closest = block[np.arange(nearest.size), nearest] + squared_norms[begin : begin + rows]
        distances[begin : begin + rows] = np.maximum(closest, 0.0)
    return assignments, distances


def _means(points, assignments, distances, num_clusters):
    """Cluster means (float64 sums); an empty cluster takes the farthest point not yet taken."""
    dim = points.shape[1]
    flat = (assignments[:, None] * dim + np.arange(dim)[None, :]).ravel()
    sums = np.bincount(flat, weights=points.ravel(), minlength=num_clusters * dim)
    counts = np.bincount(assignments, minlength=num_clusters)
    centroids = sums.reshape(num_clusters, dim) / np.maximum(counts, 1)[:, None]
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        farthest = np.argsort(-distances, kind="stable")[: empty.size]
        centroids[empty] = points[farthest]
    return centroids.astype(np.float32)


def kmeans_description(num_points, num_clusters, dim, niter=20, nredo=None, seed=0):
    """The `nmi_kmeans` string of `evaluate`: which k-means gave the NMI."""
    runs = default_restarts(num_points, num_clusters, dim) if nredo is None else int(nredo)
    return f"keras-dml k-means (NumPy), seed {seed}, {niter} iterations, best of {runs}"


def cluster_nmi(a, b):
    """Normalised mutual information `2 I(a; b) / (H(a) + H(b))` of two labelings of `[N]`.

    Raises:
        ValueError: `a` and `b` are not non-empty 1-D arrays of one length.

    Examples:
    >>> round(cluster_nmi([0, 0, 1, 1], [1, 1, 0, 0]), 6)
    1.0
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(
            f"`a` and `b` must be non-empty 1-D labelings of equal length. Received {a.shape}, "
            f"{b.shape}."
        )
    return float(normalized_mutual_info_score(a, b))


def nmi(embeddings, labels, niter=20, nredo=None, seed=0):
    """NMI of `labels` and the `lloyd_kmeans` clusters of `embeddings` (k = number of classes).

    Examples:
    >>> x = np.array([[0, 0], [0, 0.1], [5, 5], [5, 5.1]], dtype="float32")
    >>> round(nmi(x, np.array([0, 0, 1, 1])), 3)
    1.0

    References:
        Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016
        (NMI for metric learning).
    """
    labels = np.asarray(labels)
    num_classes = np.unique(labels).size
    assignments, _ = lloyd_kmeans(embeddings, num_classes, niter=niter, nredo=nredo, seed=seed)
    return cluster_nmi(labels, assignments)
