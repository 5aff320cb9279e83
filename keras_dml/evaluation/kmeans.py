"""k-means for NMI: one NumPy implementation, so NMI does not depend on the installed extras.

Before, NMI ran faiss k-means when faiss was installed and scikit-learn's otherwise: two
initialisations (random points vs k-means++) and two random streams, so the same embeddings gave
different NMIs (e.g. 0.652 and 0.545 on the digits test embeddings of the zoo's baseline). Here the
algorithm, the initialisation, the random stream and the iterations are keras-dml's own, in NumPy:

- initialisation: `num_clusters` distinct points drawn by `numpy.random.default_rng(seed)` (as
  faiss does; it costs nothing at any k, unlike k-means++'s k sequential passes);
- Lloyd iterations: squared Euclidean distances by one float32 matrix product per block of
  points, the nearest centroid (lowest index on ties), centroids as float64 means; an empty
  cluster takes the point farthest from its centroid; the loop stops early when no assignment
  changes (later iterations would repeat it);
- restarts: `nredo` initialisations from the same random stream; the lowest inertia (sum of
  squared distances to the assigned centroids) wins, the first one on ties. By default
  (`default_restarts`) up to 10 runs while they stay cheap: with few clusters a single run often
  stops in a poor local minimum (the digits validation split, 2 classes: one faiss run gave
  NMI 0.11 at inertia 134 where the classes have inertia 88.6 and the best of 10 runs 0.884), and
  with thousands of clusters one run costs seconds while NMI varies little between runs (10,000
  SOP-like embeddings of `benchmarks/evaluation.py`, 1,870 clusters: one faiss run 0.8138, the
  best of 4 runs here 0.8160).
"""

import numpy as np

# Distance block of at most this many float32 entries (128 MB) per matrix product.
_BLOCK_ENTRIES = 2**25
# Default restarts: at most this many, all together within _RESTART_WORK multiply-adds per
# iteration (N x k x D summed over the runs): 20 iterations of 2.4e9 took 4.5-5 s on 2 shared CPU
# cores (10,000 x 128, k = 1,870), where one faiss run took 7.5-8.5 s.
_MAX_RESTARTS = 10
_RESTART_WORK = 2 * 10**9


def default_restarts(num_points, num_clusters, dim):
    """Runs of `lloyd_kmeans` used when `nredo` is `None`: up to 10, fewer when k-means is costly.

    Args:
        num_points: int. N.
        num_clusters: int. k.
        dim: int. D.

    Returns:
        int in `[1, 10]`: `2e9 // (N * k * D)`, clipped.

    Examples:
    >>> default_restarts(364, 2, 64), default_restarts(60502, 11316, 128)
    (10, 1)
    """
    work = max(1, int(num_points) * int(num_clusters) * int(dim))
    return int(min(_MAX_RESTARTS, max(1, _RESTART_WORK // work)))


def lloyd_kmeans(points, num_clusters, niter=20, nredo=None, seed=0):
    """Clusters `points` with seeded Lloyd k-means and returns the best of `nredo` runs.

    Args:
        points: float array `[N, D]`.
        num_clusters: int. k, in `[1, N]`.
        niter: int. Lloyd iterations per run (fewer when the assignment stops changing).
            Defaults to `20`.
        nredo: int or `None`. Runs from different initialisations; the lowest inertia is kept.
            Defaults to `None` (`default_restarts`).
        seed: int. Seed of `numpy.random.default_rng` for the initialisations. Defaults to `0`.

    Returns:
        `(assignments, inertia)`: int64 array `[N]` of cluster ids in `[0, num_clusters)` and the
        float inertia of that run.

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
    """Nearest centroid of every point and its squared distance, block by block."""
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
