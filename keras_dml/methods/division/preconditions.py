"""What both division callbacks (D&C, hierarchical D&C) check first: period, clustering, sampler."""

CLUSTER_ON = ("embedding", "features")


def check_division_arguments(every_name, every, cluster_on, sampler):
    """Validates the arguments a division callback shares with the other one.

    Args:
        every_name: str. The callback's name for its period, used in the message
            (`"recluster_every"`, `"division_every"`).
        every: int. Epochs between divisions (positive).
        cluster_on: str. One of `CLUSTER_ON`: the concatenated embedding or the L2-normalised
            pooled backbone features.
        sampler: object with a `set_clusters(assignment)` method.

    Raises:
        ValueError: for a malformed argument.

    Examples:
    >>> class Sampler:
    ...     def set_clusters(self, assignment): ...
    >>> check_division_arguments("division_every", 2, "embedding", Sampler())
    >>> check_division_arguments("division_every", 0, "embedding", Sampler())
    Traceback (most recent call last):
    ...
    ValueError: `division_every` must be a positive int. Received: 0
    """
    if isinstance(every, bool) or int(every) < 1:
        raise ValueError(f"`{every_name}` must be a positive int. Received: {every!r}")
    if cluster_on not in CLUSTER_ON:
        raise ValueError(f"`cluster_on` must be one of {CLUSTER_ON}. Received: {cluster_on!r}")
    if not hasattr(sampler, "set_clusters"):
        raise ValueError(f"`sampler` needs a `set_clusters` method. Received: {sampler!r}")
