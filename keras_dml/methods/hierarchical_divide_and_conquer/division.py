"""Progressive division of the training set: re-clustering with matching, then 2-means splits.

Pure NumPy on top of `keras_dml.methods.division.clustering` (k-means, Hungarian
matching); the callback calls these between epochs.

Numbering of the children: clusters are visited in order c = 0..K-1 and each contributes its
children to consecutive new ids; a split cluster gives two ids (2-means label 0 first), a cluster
that stays whole gives one. When every cluster splits this is exactly the reference code's
`2c, 2c + 1`; when some cannot, the ids stay contiguous (`0..K'-1`), so learner k always owns mask
k. `parents[j]` is the old cluster of new cluster j.
"""

import numpy as np

from keras_dml.methods.division.class_fallback import divide_samples
from keras_dml.methods.division.clustering import (
    ClusteringError,
    match_clusters,
    usable_classes_per_cluster,
)


def recluster(
    vectors,
    labels,
    num_clusters,
    previous=None,
    seed=0,
    similarity="iou",
    **kmeans_options,
):
    """k-means into the current K clusters, relabelled to match `previous` (Eq. 2-3).

    Every cluster must hold 2 classes with 2 samples (else the k-means is retried, then the
    classes are split by their means, balanced; see `class_fallback.divide_samples`).

    Args:
        vectors: float array `[N, dim]`. Embeddings of the training set.
        labels: int array `[N]`. Class labels.
        num_clusters: int. K.
        previous: int array `[N]` or `None`. The assignment before re-clustering; new cluster j
            takes the id of the old cluster it overlaps most (Hungarian on IoU, Eq. 3).
        seed: int. k-means seed. Defaults to `0`.
        similarity: str. `"iou"` or `"overlap"`. Defaults to `"iou"`.
        **kmeans_options: `niter`, `nredo`, `max_attempts`, `backend` of `clustering.kmeans`.

    Returns:
        int64 array `[N]` with ids in `[0, K)`.

    Raises:
        ClusteringError: when no acceptable partition is found.

    Examples:
    >>> x = np.repeat(np.eye(2, dtype="float32"), 6, axis=0)
    >>> recluster(x, np.arange(12) // 2, 2, previous=np.repeat([1, 0], 6)).tolist()[::6]
    [1, 0]

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1.1, Eq. (2) (clustering) and Eq. (3) (matching old and new clusters).
    """
    labels = np.asarray(labels)
    if num_clusters == 1:
        return np.zeros((labels.size,), np.int64)
    assignment, _ = divide_samples(vectors, labels, int(num_clusters), seed=seed, **kmeans_options)
    if previous is not None and np.max(previous) < num_clusters:
        assignment = match_clusters(previous, assignment, num_clusters, similarity)
    return assignment


def split_clusters(
    vectors,
    labels,
    assignment,
    max_clusters,
    seed=0,
    attempts=30,
    splittable=None,
    **kmeans_options,
):
    """Splits clusters in two with 2-means until `max_clusters` (bisecting step of Sec. 3.1.1).

    Each cluster is split by 2-means on its own points, retried with up to `attempts` seeds until
    both children hold at least 2 classes with at least 2 samples, then by balanced 2-means of
    its class means (`class_fallback.divide_samples`: each class whole in one half). A cluster
    with fewer than 4 classes of 2 samples stays whole. When the budget
    `max_clusters - K` is smaller than the number of splittable clusters, the largest clusters
    are split first.

    Args:
        vectors: float array `[N, dim]`.
        labels: int array `[N]`.
        assignment: int array `[N]`, ids in `[0, K)`.
        max_clusters: int. K_max.
        seed: int. Base seed; cluster c uses `seed + 97 * c` onwards. Defaults to `0`.
        attempts: int. Seeds tried per cluster. Defaults to `30` (reference code).
        splittable: sequence of bool `[K]` or `None`. Clusters allowed to split (e.g. a fixed
            mask too small to halve). Defaults to `None` (all).
        **kmeans_options: `niter`, `nredo`, `backend` of `clustering.kmeans`.

    Returns:
        `(new_assignment, parents, unsplit)`: int64 array `[N]` with ids in `[0, K')`, int64
        array `[K']` of parent ids (see the module docstring) and the list of clusters that could
        not be split although the budget allowed it.

    Examples:
    >>> x = np.repeat(np.eye(4, dtype="float32"), 4, axis=0)
    >>> new, parents, unsplit = split_clusters(x, np.arange(16) // 2, np.zeros(16, int), 2)
    >>> parents.tolist(), sorted(set(new.tolist())), unsplit
    ([0, 0], [0, 1], [])

    References:
        Sanakoyeu et al., TPAMI 2021, Sec. 3.1.1 (bisecting division) and Sec. 3.2.
    """
    labels = np.asarray(labels)
    assignment = np.asarray(assignment, np.int64)
    num_clusters = int(assignment.max()) + 1
    if max_clusters < num_clusters:
        raise ValueError(
            f"`max_clusters`={max_clusters} is smaller than the current K={num_clusters}."
        )
    sizes = np.bincount(assignment, minlength=num_clusters)
    budget = int(max_clusters) - num_clusters
    children = {}
    unsplit = []
    for c in np.argsort(-sizes, kind="stable"):
        if budget == 0:
            break
        if splittable is not None and not splittable[c]:
            continue
        members = np.flatnonzero(assignment == c)
        halves = _bisect(
            vectors[members], labels[members], seed + 97 * int(c), attempts, **kmeans_options
        )
        if halves is None:
            unsplit.append(int(c))
            continue
        children[int(c)] = (members, halves)
        budget -= 1
    new = np.empty_like(assignment)
    parents = []
    for c in range(num_clusters):
        if c in children:
            members, halves = children[c]
            new[members] = len(parents) + halves
            parents.extend([c, c])
        else:
            new[assignment == c] = len(parents)
            parents.append(c)
    return new, np.asarray(parents, np.int64), sorted(unsplit)


def _bisect(vectors, labels, seed, attempts, **kmeans_options):
    """2-means labels of one cluster, or `None` when it cannot be split acceptably."""
    if usable_classes_per_cluster(np.zeros(labels.size, np.int64), labels, 1)[0] < 2:
        return None
    if labels.size < 4:
        return None
    try:
        # Falls back to splitting the class means (each class whole in one half).
        halves, _ = divide_samples(
            vectors, labels, 2, seed=seed, max_attempts=int(attempts), **kmeans_options
        )
        return halves
    except ClusteringError:
        return None
