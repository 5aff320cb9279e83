"""`resolve_learner_dims`: the per-learner embedding sizes of an ensemble, checked."""


def resolve_learner_dims(embedding_dim, num_learners, learner_dims=None, equal=False):
    """Returns the per-learner embedding sizes as a tuple, checking the arguments.

    Without `learner_dims`, `embedding_dim` is split as evenly as it goes: the first
    `embedding_dim % num_learners` learners get one dimension more (128 over 3: 43, 43, 42).
    The learner count is often fitted to the data (`keras_dml.training.fit_to_data`: D&C gets
    `classes // 2` learners, e.g. 3 with 6 training classes) and the embedding size is the
    user's; an uneven split by one dimension keeps both, where requiring divisibility made every
    count that does not divide 128 (3, 5, 6, 7) fail to build, and picking another count would
    change the method's main parameter behind the user's back.

    Args:
        embedding_dim: int. Total size, split over the learners when `learner_dims` is `None`.
        num_learners: int. Number of learners.
        learner_dims: sequence of int or `None`. Explicit sizes.
        equal: bool. Require equal sizes (a model whose learners share one head, as ABE's and
            M-heads' do). Defaults to `False`.

    Returns:
        tuple of int, one size per learner.

    Examples:
    >>> resolve_learner_dims(128, 3)
    (43, 43, 42)
    >>> resolve_learner_dims(128, 4)
    (32, 32, 32, 32)
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
    size, extra = divmod(embedding_dim, num_learners)
    return tuple(size + 1 if k < extra else size for k in range(num_learners))
