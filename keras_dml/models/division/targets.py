"""The targets of cluster-conditioned batches (D&C and hierarchical D&C)."""

from keras import ops


def split_targets(y):
    """Splits the targets of a batch into `(labels, clusters or None)`.

    Accepts `labels`, `{"labels": ..., "clusters": ...}` or `{"labels": ...}`.
    """
    if isinstance(y, dict):
        if "labels" not in y:
            raise ValueError(
                "Dict targets must hold 'labels' (and optionally 'clusters'). "
                f"Received keys {sorted(y)}."
            )
        return y["labels"], y.get("clusters")
    if y is None:
        raise ValueError("DivideAndConquer needs labels: batches of (images, labels).")
    return y, None


def batch_cluster(clusters):
    """The cluster id of a batch (every example of a batch comes from one cluster): int32 scalar.

    Args:
        clusters: int tensor `[B]` (or `[B, 1]`), the `clusters` target.

    Returns:
        int32 scalar tensor, the first example's cluster id.
    """
    return ops.cast(ops.reshape(clusters, (-1,))[0], "int32")
