"""The chief's part of a Divide & Conquer division: k-means, matching, and what it tells workers.

`DivideAndConquerCallback.divide` embeds the training set and calls `cluster_division` on the
chief worker only; `encode_outcome` turns the result into the vector that
`keras_dml.models.distribution.from_chief` hands to every worker, whose first entry says whether
a new assignment follows (`DIVIDED`), the previous division is kept (`KEPT`) or the division
failed (`FATAL`).
"""

import time
import warnings

import numpy as np

from keras_dml.evaluation.clustering import cluster_nmi
from keras_dml.methods.division.class_fallback import divide_samples
from keras_dml.methods.division.clustering import (
    ClusteringError,
    cluster_sizes,
    match_clusters,
)

# What the chief's division vector starts with: a new assignment follows, the previous division
# is kept (k-means failed on a later division), or the division failed.
DIVIDED, KEPT, FATAL = 1, 0, -1


def division_entry(
    epoch,
    division,
    assignment,
    previous,
    num_clusters,
    embed_seconds=0.0,
    kmeans_seconds=0.0,
    match_seconds=0.0,
):
    """The log entry of a division that gave a new assignment.

    Args:
        epoch: int or `None`. Epoch at whose start the division ran.
        division: int. Number of the division (1 for the first).
        assignment: 1-D int array. The new cluster of every training sample.
        previous: 1-D int array or `None`. The assignment before this division.
        num_clusters: int. K.
        embed_seconds: float. Time spent embedding the training set. Defaults to `0.0` (a
            worker, which only receives the assignment).
        kmeans_seconds: float. Time spent in k-means. Defaults to `0.0`.
        match_seconds: float. Time spent matching the clusters. Defaults to `0.0`.

    Returns:
        dict with `epoch`, `division`, `cluster_sizes`, `nmi_previous` (`None` for the first
        division) and the three timings.
    """
    return {
        "epoch": epoch,
        "division": division,
        "cluster_sizes": cluster_sizes(assignment, num_clusters).tolist(),
        "nmi_previous": None if previous is None else cluster_nmi(previous, assignment),
        "embed_seconds": embed_seconds,
        "kmeans_seconds": kmeans_seconds,
        "match_seconds": match_seconds,
    }


def cluster_division(
    vectors,
    labels,
    num_clusters,
    previous,
    epoch,
    count,
    seed=0,
    similarity="iou",
    kmeans_options=None,
    embed_seconds=0.0,
):
    """Clusters the training vectors into K and matches the clusters to the previous ones.

    k-means (seed `seed + 1000 * count`) is retried until every cluster holds 2 classes with 2
    samples, else the classes are split by their means, balanced (`divide_samples`; logged as
    `by_class` in the entry, not warned: with 2 * K classes it always succeeds); the new
    clusters are then relabelled after the previous ones by the Hungarian algorithm on
    `similarity`, so learner k keeps the successor of its cluster.

    Args:
        vectors: float array `[N, dim]`. The embedded training set.
        labels: int array `[N]`. Training labels.
        num_clusters: int. K, the number of learners.
        previous: int array `[N]` or `None`. The current assignment (`None` before the first
            division).
        epoch: int or `None`. Epoch of the division (for messages and the log entry).
        count: int. Divisions done so far.
        seed: int. Base k-means seed. Defaults to `0`.
        similarity: str. `"iou"` (paper) or `"overlap"` (reference code). Defaults to `"iou"`.
        kmeans_options: dict or `None`. `niter`, `nredo` of `clustering.kmeans`.
        embed_seconds: float. Time spent embedding, for the log entry. Defaults to `0.0`.

    Returns:
        dict with `assignment` (int64 `[N]`) and `entry` (see `division_entry`); only `entry`
        (with `failed`) when k-means failed on a later division and the previous one is kept
        (with a warning); only `error` (a `ClusteringError` to raise) when it fails with no
        previous division to keep (none yet, or one of more than K clusters).

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2, Algorithm 1 and Appendix A (IoU matching of consecutive clusterings).
    """
    num = num_clusters
    start = time.perf_counter()
    try:
        assignment, by_class = divide_samples(
            vectors, labels, num, seed=seed + 1000 * count, **(kmeans_options or {})
        )
    except ClusteringError as error:
        message = (
            f"Division {count} (epoch {epoch}) failed: {error} Every cluster needs 2 classes "
            "with 2 samples; use fewer learners or cluster_on='features'."
        )
        if previous is None or previous.max() >= num:
            return {"error": ClusteringError(message)}
        # Later in training the embedding may separate the few classes so well that k-means
        # cannot give every cluster two classes: keep training on the previous division
        # rather than stopping the run.
        warnings.warn(f"{message} Keeping the previous division.", stacklevel=4)
        return {"entry": {"epoch": epoch, "division": count, "failed": str(error)}}
    kmeans_seconds = time.perf_counter() - start
    start = time.perf_counter()
    if previous is not None and previous.max() < num:
        assignment = match_clusters(previous, assignment, num, similarity)
    match_seconds = time.perf_counter() - start
    entry = division_entry(
        epoch, count + 1, assignment, previous, num, embed_seconds, kmeans_seconds, match_seconds
    )
    entry["by_class"] = by_class
    return {"assignment": assignment, "entry": entry}


def encode_outcome(outcome, size):
    """The vector the chief sends to every worker: a status, then the assignment.

    Args:
        outcome: dict from `cluster_division` (an `error` entry may also hold an exception
            raised while embedding).
        size: int. N, the number of training samples.

    Returns:
        int array `[1 + N]`: `[FATAL, 0...]` when `outcome` holds an error, `[KEPT, 0...]`
        when it holds no assignment, else `[DIVIDED, assignment...]`.

    Examples:
    >>> encode_outcome({"assignment": np.array([1, 0, 1])}, 3).tolist()
    [1, 1, 0, 1]
    >>> encode_outcome({"entry": {"failed": "..."}}, 3).tolist()
    [0, 0, 0, 0]
    """
    if "error" in outcome:
        return np.concatenate([[FATAL], np.zeros((size,), np.int64)])
    if "assignment" not in outcome:
        return np.concatenate([[KEPT], np.zeros((size,), np.int64)])
    return np.concatenate([[DIVIDED], outcome["assignment"]])
