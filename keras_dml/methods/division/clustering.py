"""Clustering for Divide & Conquer: k-means, cluster-to-learner matching, NMI.

Pure NumPy / SciPy / scikit-learn (faiss when installed). Nothing here touches Keras, so the
hierarchical D&C variant and other methods can reuse it.

Public API:
- `kmeans(features, k, ...) -> assignment`: k-means with restarts, `max_points_per_centroid` raised
  so faiss does not subsample, and a retry with a new seed when a cluster comes out too small or
  fails an `accept` predicate.
- `matching_permutation(previous, current, num_clusters) -> mapping` and
  `match_clusters(previous, current, num_clusters) -> relabelled current`: the Hungarian matching
  that keeps each learner on the successor of its previous cluster.
- `cluster_nmi(a, b)`: normalised mutual information `2 I(a; b) / (H(a) + H(b))`.
- `cluster_sizes(assignment, num_clusters)` and `usable_classes_per_cluster(assignment, labels,
  num_clusters)`: the checks D&C runs on a new division.
"""

import numpy as np
from scipy.optimize import linear_sum_assignment

from keras_dml.utils import is_available, optional_import

BACKENDS = ("auto", "faiss", "sklearn")
SIMILARITIES = ("iou", "overlap")


class ClusteringError(ValueError):
    """k-means could not produce an acceptable partition (too few points or degenerate data)."""


def _check_features(features, k):
    features = np.asarray(features)
    if features.ndim != 2:
        raise ValueError(
            f"`features` must be a 2-D array [num_samples, dim]. Received shape {features.shape}."
        )
    if not np.all(np.isfinite(features)):
        raise ValueError("`features` holds NaN or inf values; k-means needs finite vectors.")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"`k` must be a positive integer. Received: k={k!r}")
    if k > features.shape[0]:
        raise ClusteringError(
            f"Cannot form k={k} clusters from {features.shape[0]} samples: k must not exceed the "
            "number of samples."
        )
    return np.ascontiguousarray(features, dtype=np.float32)


def _kmeans_faiss(features, k, niter, nredo, seed):
    faiss = optional_import("faiss", feature="k-means with faiss")
    n, dim = features.shape
    kmeans = faiss.Kmeans(
        dim,
        int(k),
        niter=int(niter),
        nredo=int(nredo),
        seed=int(seed) % (2**31),
        verbose=False,
        # faiss samples at most 256 points per centroid unless told otherwise; D&C clusters
        # the whole training set (METHOD_NOTES: raise max_points_per_centroid).
        max_points_per_centroid=max(256, int(np.ceil(n / k)) + 1),
        min_points_per_centroid=1,
    )
    kmeans.train(features)
    _, assignment = kmeans.index.search(features, 1)
    return assignment[:, 0].astype(np.int64)


def _kmeans_sklearn(features, k, niter, nredo, seed):
    from sklearn.cluster import KMeans

    model = KMeans(
        n_clusters=int(k), n_init=int(nredo), max_iter=int(niter), random_state=int(seed) % (2**31)
    )
    return model.fit_predict(features.astype(np.float64)).astype(np.int64)


def kmeans(
    features,
    k,
    niter=100,
    nredo=5,
    seed=0,
    min_cluster_size=1,
    accept=None,
    max_attempts=10,
    backend="auto",
):
    """Partitions `features` into `k` clusters with k-means, retrying degenerate partitions.

    Each attempt runs `nredo` restarts of `niter` Lloyd iterations and keeps the best; an attempt
    whose smallest cluster has fewer than `min_cluster_size` points, or that `accept` rejects, is
    repeated with the next seed (`seed + attempt`). After `max_attempts` failures a
    `ClusteringError` names the cluster sizes.

    Args:
        features: array `[num_samples, dim]`. The vectors to cluster (D&C: the concatenated
            embedding, or the pooled backbone features).
        k: int. Number of clusters.
        niter: int. Lloyd iterations per restart. Defaults to `100` (the reference code).
        nredo: int. Restarts per attempt; the lowest-inertia one is kept. Defaults to `5`.
        seed: int. Seed of the first attempt. Defaults to `0`.
        min_cluster_size: int. Smallest acceptable cluster. Defaults to `1` (no empty cluster).
        accept: callable or `None`. `accept(assignment) -> bool`; extra condition on a partition
            (e.g. hierarchical D&C: both children hold 2 classes with 2 samples).
            Defaults to `None`.
        max_attempts: int. Attempts (seeds) before giving up. Defaults to `10`.
        backend: str. `"faiss"`, `"sklearn"` or `"auto"` (faiss when installed). Defaults to
            `"auto"`.

    Returns:
        int64 array `[num_samples]` of cluster ids in `[0, k)`.

    Raises:
        ClusteringError: if `k` exceeds the number of samples or no attempt gives an acceptable
            partition.
        ValueError: for malformed arguments.

    Examples:
    >>> x = np.concatenate([np.zeros((5, 2)), np.ones((5, 2)) * 10]).astype("float32")
    >>> assignment = kmeans(x, 2, seed=0)
    >>> len(set(assignment[:5].tolist())), len(set(assignment.tolist()))
    (1, 2)

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2 ("Splitting the data") and Algorithm 1 (`ClusterData`).
    """
    features = _check_features(features, k)
    if backend not in BACKENDS:
        raise ValueError(f"`backend` must be one of {BACKENDS}. Received: backend={backend!r}")
    for name, value in (("niter", niter), ("nredo", nredo), ("max_attempts", max_attempts)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    if min_cluster_size * k > features.shape[0]:
        raise ClusteringError(
            f"Cannot form k={k} clusters of at least min_cluster_size={min_cluster_size} points "
            f"from {features.shape[0]} samples."
        )
    if backend == "auto":
        backend = "faiss" if is_available("faiss") else "sklearn"
    run = _kmeans_faiss if backend == "faiss" else _kmeans_sklearn
    if k == 1:
        return np.zeros((features.shape[0],), np.int64)
    sizes = None
    for attempt in range(int(max_attempts)):
        assignment = run(features, k, niter, nredo, seed + attempt)
        sizes = cluster_sizes(assignment, k)
        if sizes.min() >= min_cluster_size and (accept is None or accept(assignment)):
            return assignment
    reason = "" if accept is None else " or the `accept` condition failed"
    raise ClusteringError(
        f"k-means gave no acceptable partition into k={k} clusters after {max_attempts} attempts "
        f"(last cluster sizes {sizes.tolist()}; min_cluster_size={min_cluster_size}{reason}). "
        "Use fewer clusters, or check that the features are not collapsed to a few points."
    )


def cluster_sizes(assignment, num_clusters):
    """Number of points in each cluster: int64 array `[num_clusters]` (zeros for empty ones)."""
    return np.bincount(np.asarray(assignment, np.int64), minlength=int(num_clusters))[
        : int(num_clusters)
    ]


def usable_classes_per_cluster(assignment, labels, num_clusters):
    """Per cluster, the number of classes with at least 2 samples inside that cluster.

    A class with a single sample in a cluster gives no positive pair there, so D&C drops it from
    that cluster's batches (METHOD_NOTES); a cluster needs `batch_size / m` usable classes.

    Returns:
        int64 array `[num_clusters]`.
    """
    assignment = np.asarray(assignment, np.int64)
    labels = np.asarray(labels)
    counts = np.zeros((int(num_clusters),), np.int64)
    for cluster in range(int(num_clusters)):
        _, per_class = np.unique(labels[assignment == cluster], return_counts=True)
        counts[cluster] = int(np.sum(per_class >= 2))
    return counts


def _similarity(previous, current, num_clusters, similarity):
    valid = (previous >= 0) & (current >= 0)
    overlap = np.zeros((num_clusters, num_clusters), np.float64)
    np.add.at(overlap, (previous[valid], current[valid]), 1.0)
    if similarity == "overlap":
        return overlap
    union = (
        cluster_sizes(previous[valid], num_clusters)[:, None]
        + cluster_sizes(current[valid], num_clusters)[None, :]
    )
    union = union - overlap
    return np.divide(overlap, union, out=np.zeros_like(overlap), where=union > 0)


def matching_permutation(previous, current, num_clusters, similarity="iou"):
    """Hungarian matching of new clusters to old ones.

    Solves the linear assignment problem maximising the total similarity between old cluster `i`
    and new cluster `j` (IoU of their memberships, as in the paper's appendix, or the raw overlap
    as in the reference code) and returns `mapping` with `mapping[j] = i`: the new cluster `j`
    takes over old cluster `i`'s learner. Relabel with `mapping[current]`.

    The reference implementation applies this permutation inverted, which is only right when the
    matching swaps pairs or is the identity; here the mapping is applied in its own direction, so
    any permutation (e.g. a 3-cycle) maps back exactly.

    Args:
        previous: int array `[N]`. Old assignment (ids in `[0, num_clusters)`; `-1` = ignored).
        current: int array `[N]`. New assignment, same samples, same convention.
        num_clusters: int. Number of clusters K.
        similarity: str. `"iou"` or `"overlap"`. Defaults to `"iou"`.

    Returns:
        int64 array `[num_clusters]`, a permutation of `range(num_clusters)`.

    Examples:
    >>> matching_permutation([0, 1, 2], [1, 2, 0], 3).tolist()
    [2, 0, 1]

    References:
        Sanakoyeu et al., CVPR 2019, Appendix A ("Re-clustering every T epochs").
    """
    previous = np.asarray(previous, np.int64)
    current = np.asarray(current, np.int64)
    num_clusters = int(num_clusters)
    if previous.shape != current.shape or previous.ndim != 1:
        raise ValueError(
            "`previous` and `current` must be 1-D assignments of the same samples. Received "
            f"shapes {previous.shape} and {current.shape}."
        )
    if similarity not in SIMILARITIES:
        raise ValueError(
            f"`similarity` must be one of {SIMILARITIES}. Received: similarity={similarity!r}"
        )
    for name, values in (("previous", previous), ("current", current)):
        if values.size and values.max() >= num_clusters:
            raise ValueError(
                f"`{name}` holds cluster id {values.max()} >= num_clusters={num_clusters}."
            )
    score = _similarity(previous, current, num_clusters, similarity)
    old, new = linear_sum_assignment(score, maximize=True)
    mapping = np.empty((num_clusters,), np.int64)
    mapping[new] = old
    return mapping


def match_clusters(previous, current, num_clusters, similarity="iou"):
    """Relabels `current` so that each cluster keeps the id of its best-matching old cluster.

    Args:
        previous: int array `[N]` or `None`. Old assignment; `None` returns `current` unchanged.
        current: int array `[N]`. New assignment of the same samples.
        num_clusters: int. Number of clusters K.
        similarity: str. `"iou"` (paper) or `"overlap"` (reference code). Defaults to `"iou"`.

    Returns:
        int64 array `[N]`: `current` relabelled.

    Examples:
    >>> match_clusters([0, 0, 1, 1, 2, 2], [1, 1, 2, 2, 0, 0], 3).tolist()
    [0, 0, 1, 1, 2, 2]

    References:
        Sanakoyeu et al., CVPR 2019, Appendix A.
    """
    current = np.asarray(current, np.int64)
    if previous is None:
        return current.copy()
    mapping = matching_permutation(previous, current, num_clusters, similarity)
    relabelled = current.copy()
    keep = current >= 0
    relabelled[keep] = mapping[current[keep]]
    return relabelled


def _entropy(counts):
    p = counts[counts > 0] / counts.sum()
    return float(-np.sum(p * np.log(p)))


def cluster_nmi(a, b):
    """Normalised mutual information `2 I(a; b) / (H(a) + H(b))` of two labelings.

    Args:
        a: int array `[N]`. First labeling (e.g. the previous cluster assignment).
        b: int array `[N]`. Second labeling.

    Returns:
        float in `[0, 1]`; `1.0` when both labelings are a single cluster.

    Examples:
    >>> round(cluster_nmi([0, 0, 1, 1], [1, 1, 0, 0]), 6)
    1.0

    References:
        Sanakoyeu et al., CVPR 2019, Sec. 4.1 (NMI definition).
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(
            f"`a` and `b` must be non-empty 1-D labelings of equal length. Received {a.shape}, "
            f"{b.shape}."
        )
    _, a_ids = np.unique(a, return_inverse=True)
    _, b_ids = np.unique(b, return_inverse=True)
    joint = np.zeros((a_ids.max() + 1, b_ids.max() + 1), np.float64)
    np.add.at(joint, (a_ids, b_ids), 1.0)
    h_a, h_b = _entropy(joint.sum(1)), _entropy(joint.sum(0))
    if h_a + h_b == 0.0:
        return 1.0
    mutual = h_a + h_b - _entropy(joint.ravel())
    return float(max(0.0, min(1.0, 2.0 * mutual / (h_a + h_b))))
