"""Exceptions of the Divide & Conquer models (the clustering ones live in `clustering.py`)."""


class UnsupportedStrategyError(RuntimeError):
    """The divide stage was run under a multi-replica `tf.distribute` strategy.

    The divide stage updates one learner (or the backbone) conditionally on the batch's cluster,
    which `tf.distribute` cannot synchronise across replicas. Raised by
    `DivideAndConquer.train_step` and `HierarchicalDivideAndConquer.train_step` for batches with
    cluster ids; train that stage on one device (or `tf.distribute.OneDeviceStrategy`).
    """
