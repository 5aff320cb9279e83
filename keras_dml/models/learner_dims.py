"""`resolve_learner_dims`: the per-learner embedding sizes of an ensemble, checked."""


def resolve_learner_dims(embedding_dim, num_learners, learner_dims=None, equal=False):
    """The per-learner embedding sizes: `learner_dims`, or `embedding_dim` split evenly.

    Args:
        embedding_dim: int. Total size, split when `learner_dims` is `None`.
        num_learners: int. Number of learners.
        learner_dims: sequence of int or `None`. Explicit sizes.
        equal: bool. Require equal sizes (learners that share one head). Defaults to `False`.

    Returns:
        tuple of int, one size per learner.

    Examples:
    >>> resolve_learner_dims(128, 3)
    (43, 43, 42)
    """
    if learner_dims is not None:
        learner_dims = tuple(int(d) for d in learner_dims)
        if not learner_dims or min(learner_dims) < 1:
            raise ValueError(
                f"`learner_dims` must be positive sizes. Received: learner_dims={learner_dims}"
            )
        return learner_dims
    embedding_dim, num_learners = int(embedding_dim), int(num_learners)
    if num_learners < 1:
        raise ValueError(f"`num_learners` must be >= 1. Received: num_learners={num_learners}")
    if equal and embedding_dim % num_learners != 0:
        raise ValueError(
            "`embedding_dim` must be divisible by `num_learners` (the learners share one "
            f"head). Received: embedding_dim={embedding_dim}, num_learners={num_learners}"
        )
    if embedding_dim < num_learners:
        raise ValueError(
            "`embedding_dim` must be at least `num_learners` (one dimension per learner); use a "
            f"larger --embedding-dim. Received: embedding_dim={embedding_dim}, "
            f"num_learners={num_learners}"
        )
    # Uneven by one: the learner count is often fitted to the data (docs/methods/baseline.md).
    size, extra = divmod(embedding_dim, num_learners)
    return tuple(size + 1 if k < extra else size for k in range(num_learners))
