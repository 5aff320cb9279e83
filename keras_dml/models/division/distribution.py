"""What D&C and hierarchical D&C share at step level: cluster-conditioned targets and replicas."""

import tensorflow as tf


class UnsupportedStrategyError(RuntimeError):
    """The divide stage was run under a multi-replica `tf.distribute` strategy.

    The divide stage updates one learner (or the backbone) conditionally on the batch's cluster,
    which `tf.distribute` cannot synchronise across replicas. Raised by
    `DivideAndConquer.train_step` and `HierarchicalDivideAndConquer.train_step` for batches with
    cluster ids; train that stage on one device (or `tf.distribute.OneDeviceStrategy`).
    """


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


def unscale_for_distribution(loss):
    """Undoes the per-replica scaling Keras losses apply, for logging the true mean loss."""
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    return loss * replicas if replicas > 1 else loss
