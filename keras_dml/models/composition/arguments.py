"""Argument checks of `DCML`: sizes, loss weights and losses."""

import numbers

from keras_dml import losses
from keras_dml.losses.cross_batch_memory import check_memory_count, with_memory_count


def check_sizes(**sizes):
    """Returns the given sizes as ints, raising a `ValueError` naming any that is not >= 1."""
    for name, value in sizes.items():
        if isinstance(value, bool) or int(value) != value or int(value) < 1:
            raise ValueError(f"`{name}` must be a positive int. Received: {name}={value!r}")
    return tuple(int(value) for value in sizes.values())


def resolve_lambdas(lambda_subtask, num_compositors):
    """Returns `lambda_m` of Eq. (8) as a tuple of M floats (one float is broadcast)."""
    if isinstance(lambda_subtask, numbers.Real):
        lambdas = (float(lambda_subtask),) * num_compositors
    else:
        lambdas = tuple(float(v) for v in lambda_subtask)
    if len(lambdas) != num_compositors or min(lambdas) < 0:
        raise ValueError(
            f"`lambda_subtask` must be a float >= 0 or {num_compositors} of them (one per "
            f"compositor). Received: lambda_subtask={lambda_subtask!r}"
        )
    return lambdas


def resolve_loss(identifier, argument, embedding_dim):
    """Builds a loss with `keras_dml.losses.get`, checked against the size it receives."""
    if isinstance(identifier, dict):  # class-based losses get the size of what they receive
        identifier = losses.with_class_arguments(identifier, embedding_dim=embedding_dim)
    try:
        loss = losses.get(identifier)
    except ValueError as error:
        raise ValueError(f"Invalid `{argument}` for DCML: {error}") from error
    expected = getattr(loss, "embedding_dim", None)
    if expected is not None and int(expected) != embedding_dim:
        raise ValueError(
            f"`{argument}` expects {expected}-d embeddings but receives {embedding_dim}-d ones "
            f"(J_dis sees K * learner_dim, J_T sees learner_dim). Received: {argument}={loss!r}"
        )
    return loss


def resolve_losses(loss, subtask_loss, num_learners, learner_dim, num_compositors=1):
    """Builds `(J_dis, J_T)`; without a `subtask_loss`, `J_T` is a fresh copy of `J_dis`."""
    dis_loss = resolve_loss(loss, "loss", num_learners * learner_dim)
    if subtask_loss is None:
        copy_config = dis_loss.get_config()
        copy_config["name"] = f"subtask_{copy_config.get('name') or 'loss'}"
        if "embedding_dim" in copy_config:  # class vectors of J_T live in the composites' space
            copy_config["embedding_dim"] = learner_dim
        if "num_memories" in copy_config:
            copy_config["num_memories"] = num_compositors
        subtask_loss = type(dis_loss).from_config(copy_config)
    elif isinstance(subtask_loss, dict):
        subtask_loss = with_memory_count(subtask_loss, num_compositors)
    subtask_loss = resolve_loss(subtask_loss, "subtask_loss", learner_dim)
    check_memory_count(subtask_loss, num_compositors, "DCML's J_T")
    return dis_loss, subtask_loss
