"""A model's loss call sites and their memories: is a loss XBM, how many memories it needs."""

from keras_dml.losses.cross_batch_memory.layer import CrossBatchMemory


def is_memory_loss(loss):
    """Whether `loss` (an instance, a registered name or a `{"name": ...}` dict) is XBM."""
    if isinstance(loss, dict):
        loss = loss.get("name")
    if isinstance(loss, str):
        return loss.strip().lower().replace("-", "_") == "cross_batch_memory"
    return isinstance(loss, CrossBatchMemory)


def with_memory_count(loss_config, num_memories):
    """`loss_config` with `num_memories` filled in (when unset) for a cross-batch memory.

    Examples:
    >>> with_memory_count({"name": "cross_batch_memory", "memory_size": 64}, 3)
    {'name': 'cross_batch_memory', 'memory_size': 64, 'num_memories': 3}
    """
    if not isinstance(loss_config, dict) or not is_memory_loss(loss_config) or not num_memories:
        return loss_config
    if loss_config.get("num_memories") is not None:
        return loss_config
    return {**loss_config, "num_memories": int(num_memories)}


def check_memory_count(loss, needed, owner):
    """Raises a one-line `ValueError` when the XBM `loss` has fewer than `needed` memories."""
    if is_memory_loss(loss) and loss.num_memories < needed:
        raise ValueError(
            f"{owner} calls its loss from {needed} sites (the whole embedding and each learner), "
            f"each with its own memory; build CrossBatchMemory with num_memories={needed}. "
            f"Received: num_memories={loss.num_memories}"
        )
