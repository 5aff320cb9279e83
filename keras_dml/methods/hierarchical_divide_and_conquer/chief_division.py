"""The chief's part of a hierarchical D&C division, and the vector every worker receives."""

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

    Returns:
        dict with `assignment`, `parents` (or `None`), `reclustered`, `unsplit` (clusters left
        whole) and `cluster_seconds`.

    Raises:
        ClusteringError: when the re-clustering fails and there is no `previous` to keep.

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1.1, Eq. (2)-(3).
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
    """The chief's vector: `[ok, reclustered, assignment, parents (-1 padded)]`, all -1 on error.

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
    """`(ok, reclustered, assignment, parents)` of `encode_outcome`'s vector, parents unpadded."""
    ok = bool(received[0] >= 0)
    reclustered = bool(received[1])
    assignment = received[2 : 2 + size].astype(np.int64)
    parents = received[2 + size :]
    return ok, reclustered, assignment, parents[parents >= 0].astype(np.int64)


def division_logs(entry):
    """The numeric `hdc_*` Keras logs of a `HierarchicalDivideAndConquerCallback.divide` entry."""
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
