"""Progressive division of the training set: re-clustering with matching, then 2-means splits."""

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
    """k-means into K clusters of 2 classes with 2 samples each, relabelled to match `previous`.

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
        Sec. 3.1.1, Eq. (2) (clustering) and Eq. (3) (matching).
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
    """Splits clusters in two with 2-means, largest first, until `max_clusters` (Sec. 3.1.1).

    Returns:
        `(new_assignment, parents, unsplit)`: ids in `[0, K')`, the old cluster of each new one,
        and the clusters that could not be split.

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
    # Children take consecutive ids in parent order (2-means label 0 first): the reference
    # code's `2c, 2c + 1` when every cluster splits, contiguous ids (mask k for learner k) if not.
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
