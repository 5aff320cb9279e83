"""What both division callbacks (D&C, hierarchical D&C) check first: period, clustering, sampler."""

CLUSTER_ON = ("embedding", "features")


def check_division_arguments(every_name, every, cluster_on, sampler):
    """Validates the arguments both division callbacks take (`every_name` names the period).

    Raises:
        ValueError: for a malformed argument.
    """
    if isinstance(every, bool) or int(every) < 1:
        raise ValueError(f"`{every_name}` must be a positive int. Received: {every!r}")
    if cluster_on not in CLUSTER_ON:
        raise ValueError(f"`cluster_on` must be one of {CLUSTER_ON}. Received: {cluster_on!r}")
    if not hasattr(sampler, "set_clusters"):
        raise ValueError(f"`sampler` needs a `set_clusters` method. Received: {sampler!r}")
