"""In-batch losses over the global batch under `tf.distribute`, and a no-op on one device.

Metric losses compare every pair of a batch, so under `MirroredStrategy` each replica gathers the
labels and embeddings of all replicas and computes the loss of the global batch, the loss one
device computes on the same batch. The gradient of `all_gather` sums the replicas' upstream
gradients and the optimizer sums the replicas' variable gradients, so the gathered loss is divided
by the number of replicas (Keras scales its own per-example losses the same way, and its step
multiplies the tracked loss back). Other backends and one device return the inputs unchanged.
"""

import keras
from keras import ops


def gather_replicas(*tensors):
    """Concatenates `tensors` over the replicas of the current `tf.distribute` strategy.

    Args:
        *tensors: batch-major tensors (or `None`) of this replica.

    Returns:
        `(replicas, gathered)`: the number of replicas in sync (1 outside a multi-replica
        strategy and on other backends) and the list of tensors over the global batch.
    """
    if keras.backend.backend() != "tensorflow":
        return 1, list(tensors)
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return 1, list(tensors)
    gathered = [None if t is None else context.all_gather(t, axis=0) for t in tensors]
    return context.num_replicas_in_sync, gathered


def with_model_losses(model, loss, replicas=1):
    """`loss / replicas` plus the model's own losses (`add_loss`, regularizers), in float32."""
    total = ops.cast(loss, "float32") / float(replicas)
    if model.losses:
        extra = ops.sum(ops.stack([ops.cast(ops.sum(v), "float32") for v in model.losses]))
        total = total + extra / float(replicas)
    return total
