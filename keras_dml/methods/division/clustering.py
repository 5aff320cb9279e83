"""Divide & Conquer's clustering: k-means with retries, and cluster-to-learner matching."""

import numpy as np
from scipy.optimize import linear_sum_assignment

from keras_dml.evaluation.clustering import lloyd_kmeans

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


def kmeans(
    features,
    k,
    niter=100,
    nredo=5,
    seed=0,
    min_cluster_size=1,
    accept=None,
    max_attempts=10,
):
    """Partitions `features` into `k` clusters with `lloyd_kmeans`, retrying degenerate ones.

    An attempt whose smallest cluster has fewer than `min_cluster_size` points, or that `accept`
    rejects, is repeated with the next seed (`seed + attempt`).

    Args:
        features: array `[num_samples, dim]`. The vectors to cluster.
        k: int. Number of clusters.
        niter: int. Lloyd iterations per run. Defaults to `100`.
        nredo: int. Runs per attempt; the lowest inertia is kept. Defaults to `5`.
        seed: int. Seed of the first attempt. Defaults to `0`.
        min_cluster_size: int. Smallest acceptable cluster. Defaults to `1`.
        accept: callable or `None`. `accept(assignment) -> bool`, an extra condition on a
            partition. Defaults to `None`.
        max_attempts: int. Attempts (seeds) before giving up. Defaults to `10`.

    Returns:
        int64 array `[num_samples]` of cluster ids in `[0, k)`.

    Raises:
        ClusteringError: `k` exceeds the number of samples or no attempt is acceptable.
        ValueError: malformed arguments.

    Examples:
    >>> x = np.concatenate([np.zeros((5, 2)), np.ones((5, 2)) * 10]).astype("float32")
    >>> assignment = kmeans(x, 2, seed=0)
    >>> len(set(assignment[:5].tolist())), len(set(assignment.tolist()))
    (1, 2)

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2 and Algorithm 1 (`ClusterData`).
    """
    features = _check_features(features, k)
    for name, value in (("niter", niter), ("nredo", nredo), ("max_attempts", max_attempts)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value!r}")
    if min_cluster_size * k > features.shape[0]:
        raise ClusteringError(
            f"Cannot form k={k} clusters of at least min_cluster_size={min_cluster_size} points "
            f"from {features.shape[0]} samples."
        )
    if k == 1:
        return np.zeros((features.shape[0],), np.int64)
    sizes = None
    for attempt in range(int(max_attempts)):
        assignment, _ = lloyd_kmeans(features, int(k), int(niter), int(nredo), seed + attempt)
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
    that cluster's batches (docs/paper_notes.md); a cluster needs `batch_size / m` usable classes.

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
