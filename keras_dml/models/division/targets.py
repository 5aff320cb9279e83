"""The targets of cluster-conditioned batches (D&C and hierarchical D&C)."""


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
