"""`resolve_learner_dims`: the per-learner embedding sizes of an ensemble, checked."""


def resolve_learner_dims(embedding_dim, num_learners, learner_dims=None):
    """Returns the per-learner embedding sizes as a tuple, checking the arguments.

    Args:
        embedding_dim: int. Total size, split evenly when `learner_dims` is `None`.
        num_learners: int. Number of learners.
        learner_dims: sequence of int or `None`. Explicit sizes.

    Returns:
        tuple of int, one size per learner.
    """
    if learner_dims is not None:
        learner_dims = tuple(int(d) for d in learner_dims)
        if not learner_dims or min(learner_dims) < 1:
            raise ValueError(
                f"`learner_dims` must be positive sizes. Received: learner_dims={learner_dims}"
            )
        return learner_dims
    if int(num_learners) < 1:
        raise ValueError(f"`num_learners` must be >= 1. Received: num_learners={num_learners}")
    if int(embedding_dim) % int(num_learners) != 0:
        raise ValueError(
            "`embedding_dim` must be divisible by `num_learners` (or pass `learner_dims`). "
            f"Received: embedding_dim={embedding_dim}, num_learners={num_learners}"
        )
    return (int(embedding_dim) // int(num_learners),) * int(num_learners)
