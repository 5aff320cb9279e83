"""In-batch losses over the global batch under `tf.distribute`, and a no-op on one device."""

import keras
from keras import ops


def gather_replicas(*tensors):
    """Concatenates `tensors` over the replicas of the current `tf.distribute` strategy.

    Args:
        *tensors: batch-major tensors (or `None`) of this replica.

    Returns:
        `(replicas, gathered)`: the replica count (1 on one device) and the global batch's tensors.
    """
    if keras.backend.backend() != "tensorflow":
        return 1, list(tensors)
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return 1, list(tensors)

    devices = tf.distribute.get_strategy().extended.worker_devices

    def gather(tensor):
        if tensor is None:
            return None
        if not tensor.device and len(devices) == 1:
            # A worker of MultiWorkerMirroredStrategy with one local device traces the step
            # without a device scope, and `all_gather` uses the tensor's device as its
            # destination ("destinations can not be empty"): place it on the replica's device.
            with tf.device(devices[0]):
                tensor = tf.identity(tensor)
        gathered = context.all_gather(tensor, axis=0)
        if None not in tuple(tensor.shape[1:]):  # keep the static feature dimensions
            gathered = tf.ensure_shape(gathered, (None, *tensor.shape[1:]))
        return gathered

    return context.num_replicas_in_sync, [gather(t) for t in tensors]


def with_model_losses(model, loss, replicas=1):
    """`loss / replicas` plus the model's own losses (`add_loss`, regularizers), in float32."""
    # The gradient of `all_gather` sums the replicas' upstream gradients, hence the division.
    total = ops.cast(loss, "float32") / float(replicas)
    if model.losses:
        extra = ops.sum(ops.stack([ops.cast(ops.sum(v), "float32") for v in model.losses]))
        total = total + extra / float(replicas)
    return total


class ForwardCache:
    """What a training `call` computed besides its output, for that step's `compute_loss`.

    `take` returns a value only for exactly the output tensor it was stored under.
    """

    def __init__(self):
        self._entries = {}

    def put(self, output, value):
        """Stores `value` for the output tensor `output`."""
        self._entries[id(output)] = (output, value)

    def take(self, output):
        """The value stored for exactly `output` (removed), or `None`."""
        entry = self._entries.pop(id(output), None)
        if entry is None or entry[0] is not output:
            return None
        return entry[1]


def is_chief(strategy):
    """Whether this process leads a `tf.distribute` cluster (the `chief` task, else worker 0)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    if resolver.task_type == "chief":
        return True
    has_chief = "chief" in resolver.cluster_spec().as_dict()
    return resolver.task_type == "worker" and resolver.task_id == 0 and not has_chief


def num_workers(strategy):
    """Number of processes of a strategy's cluster (1 for local strategies and `None`)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return 1
    spec = resolver.cluster_spec().as_dict()
    return sum(len(spec.get(kind, ())) for kind in ("chief", "worker"))


def from_chief(strategy, compute, size):
    """Runs `compute()` on the chief only; every worker of the cluster gets its result.

    Every worker must call it at the same point of training (as a callback hook does).

    Args:
        strategy: the model's `tf.distribute` strategy, or `None`.
        compute: callable `() -> array [size]` of numbers exact in float64. Called on the chief.
        size: int. Length of the vector, known to every worker.

    Returns:
        float64 NumPy array `[size]`: the chief's vector.
    """
    import numpy as np

    if num_workers(strategy) == 1:
        return np.asarray(compute(), np.float64)
    import tensorflow as tf

    vector = np.zeros((size,), np.float64)
    if is_chief(strategy):
        vector = np.asarray(compute(), np.float64).reshape((size,))

    # A collective sum in which only global replica 0 (on the chief) contributes.
    def contribution(context):
        if context.replica_id_in_sync_group == 0:
            return tf.constant(vector)
        return tf.zeros((size,), tf.float64)

    values = strategy.experimental_distribute_values_from_function(contribution)
    total = strategy.reduce("SUM", values, axis=None)
    return np.asarray(total, np.float64)
