"""The chief's part of a hierarchical D&C division: re-clustering, splits, what workers receive.

`HierarchicalDivideAndConquerCallback.divide` embeds the training set and calls
`cluster_and_split` on the chief worker only; `encode_outcome` turns the result into the vector
that `keras_dml.models.distribution.from_chief` hands to every worker and `decode_outcome` reads
it back there, so all workers keep the same learners and draw the same batches.

Layout of the vector, for N training samples and K_max learners: `[ok, reclustered,
assignment (N), parents (K_max, -1 padded)]`; every entry is -1 when the chief failed.
"""

import time
import warnings

import numpy as np

from keras_dml.methods.division.clustering import ClusteringError
from keras_dml.methods.hierarchical_divide_and_conquer.division import recluster, split_clusters


def cluster_and_split(
    vectors,
    labels,
    num_clusters,
    max_clusters,
    previous,
    count,
    allow_split=True,
    splittable=None,
    seed=0,
    similarity="iou",
    split_attempts=30,
    kmeans_options=None,
):
    """Re-clusters into the current K (Eq. 2-3), then splits clusters in two while K < K_max.

    A re-clustering for which k-means finds no acceptable partition keeps `previous`; a cluster
    that cannot be split stays whole. Both warn (`warnings.warn`, one `warning:` line in the CLI
    and the demo).

    Args:
        vectors: float array `[N, dim]`. The embedded training set.
        labels: int array `[N]`. Training labels.
        num_clusters: int. K, the learners active now.
        max_clusters: int. K_max.
        previous: int array `[N]` or `None`. The current assignment.
        count: int. Re-clusterings done so far; both k-means use seed `seed + 1000 * count`.
        allow_split: bool. Split while K < K_max. Defaults to `True`.
        splittable: sequence of bool `[K]` or `None`. Clusters allowed to split (fixed masks
            too small to halve are not). Defaults to `None` (all).
        seed: int. Base seed. Defaults to `0`.
        similarity: str. `"iou"` (Eq. 3) or `"overlap"`. Defaults to `"iou"`.
        split_attempts: int. 2-means seeds tried per cluster. Defaults to `30`.
        kmeans_options: dict or `None`. `niter`, `nredo`, `backend` of `clustering.kmeans`.

    Returns:
        dict with `assignment` (int64 `[N]`), `parents` (int64 `[K']`, the parent of each
        learner when K grew, else `None`), `reclustered` (bool), `unsplit` (clusters that could
        not be split) and `cluster_seconds`.

    Raises:
        ClusteringError: when the re-clustering fails and there is no `previous` to keep.

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1.1, Eq. (2)-(3) (re-clustering and matching) and the bisecting split.
    """
    kmeans_options = kmeans_options or {}
    start = time.perf_counter()
    reclustered = True
    try:
        assignment = recluster(
            vectors,
            labels,
            num_clusters,
            previous=previous,
            seed=seed + 1000 * count,
            similarity=similarity,
            **kmeans_options,
        )
    except ClusteringError as error:
        if previous is None:
            raise
        warnings.warn(
            f"HDC: re-clustering failed ({error}); keeping the previous clusters.", stacklevel=3
        )
        assignment, reclustered = previous, False
    unsplit, split_parents = [], None
    if allow_split and num_clusters < max_clusters:
        new, parents, unsplit = split_clusters(
            vectors,
            labels,
            assignment,
            max_clusters,
            seed=seed + 1000 * count,
            attempts=split_attempts,
            splittable=splittable,
            **kmeans_options,
        )
        if unsplit:
            warnings.warn(
                f"HDC: clusters {unsplit} could not be split; they stay whole.", stacklevel=3
            )
        if parents.size > num_clusters:
            assignment, split_parents = new, np.asarray(parents, np.int64)
    return {
        "assignment": np.asarray(assignment, np.int64),
        "parents": split_parents,
        "reclustered": reclustered,
        "unsplit": unsplit,
        "cluster_seconds": time.perf_counter() - start,
    }


def encode_outcome(outcome, size, width):
    """The vector the chief sends to every worker (see the module docstring for its layout).

    Args:
        outcome: dict from `cluster_and_split`, or one holding `error` when the chief failed.
        size: int. N, the number of training samples.
        width: int. K_max, the room for the parents.

    Returns:
        float array `[2 + size + width]`.

    Examples:
    >>> out = {"assignment": np.array([0, 1, 1]), "parents": np.array([0, 0]), "reclustered": 1}
    >>> encode_outcome(out, 3, 4).tolist()
    [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, -1.0, -1.0]
    """
    if "error" in outcome:
        return np.full((2 + size + width,), -1.0)
    parents = np.full((width,), -1.0)
    if outcome["parents"] is not None:
        parents[: outcome["parents"].size] = outcome["parents"]
    head = [1.0, float(outcome["reclustered"])]
    return np.concatenate([head, outcome["assignment"], parents])


def decode_outcome(received, size):
    """What a worker reads from the chief's vector (see `encode_outcome`).

    Args:
        received: float array `[2 + size + K_max]` from `from_chief`.
        size: int. N, the number of training samples.

    Returns:
        `(ok, reclustered, assignment, parents)`: bools, int64 `[N]` and int64 `[K']` (empty
        when no cluster was split).

    Examples:
    >>> ok, reclustered, assignment, parents = decode_outcome(
    ...     np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, -1.0, -1.0]), 3
    ... )
    >>> ok, reclustered, assignment.tolist(), parents.tolist()
    (True, True, [0, 1, 1], [0, 0])
    """
    ok = bool(received[0] >= 0)
    reclustered = bool(received[1])
    assignment = received[2 : 2 + size].astype(np.int64)
    parents = received[2 + size :]
    return ok, reclustered, assignment, parents[parents >= 0].astype(np.int64)


def division_logs(entry):
    """The `hdc_*` entries of the epoch's Keras logs for a division's log entry.

    Args:
        entry: dict, the log entry of `HierarchicalDivideAndConquerCallback.divide`.

    Returns:
        dict of floats: `hdc_split`, `hdc_reclustered`, `hdc_min_cluster_size`,
        `hdc_max_cluster_size`, `hdc_recluster_seconds` and, from the second division on,
        `hdc_nmi_previous`.
    """
    logs = {
        "hdc_split": float(entry["split"]),
        "hdc_reclustered": float(entry["reclustered"]),
        "hdc_min_cluster_size": float(min(entry["cluster_sizes"])),
        "hdc_max_cluster_size": float(max(entry["cluster_sizes"])),
        "hdc_recluster_seconds": entry["embed_seconds"] + entry["cluster_seconds"],
    }
    if entry["nmi_previous"] is not None:
        logs["hdc_nmi_previous"] = float(entry["nmi_previous"])
    return logs
