"""The `strategy` setting of a run: where `train()` builds, compiles and fits the model."""

import contextlib
import json
import os
import shutil
import sys
import tempfile

import keras

from keras_dml.models.distribution import is_chief
from keras_dml.training.run_config import STRATEGIES
from keras_dml.utils.suggestions import did_you_mean

TENSORFLOW_STRATEGIES = ("mirrored", "multi_worker")


def check_strategy(name, backend=None):
    """Checks a `strategy` setting against the names and the Keras backend.

    Args:
        name: str. One of `STRATEGIES`.
        backend: str or `None`. The Keras backend. Defaults to `keras.backend.backend()`.

    Raises:
        ValueError: for an unknown name or one the backend cannot run.
    """
    backend = backend or keras.backend.backend()
    if name not in STRATEGIES:
        raise ValueError(
            f"Unknown `strategy`.{did_you_mean(name, STRATEGIES)} Use one of {STRATEGIES} "
            "(CLI: --strategy). "
            f"Received: strategy={name!r}"
        )
    if name in TENSORFLOW_STRATEGIES and backend != "tensorflow":
        raise ValueError(
            f"strategy={name!r} is a tf.distribute strategy and needs KERAS_BACKEND=tensorflow; "
            f"on the {backend} backend use strategy='data_parallel' (JAX) or 'default'. "
            f"Received: strategy={name!r}"
        )
    if name == "data_parallel" and backend != "jax":
        raise ValueError(
            "strategy='data_parallel' is keras.distribution.DataParallel, which needs "
            f"KERAS_BACKEND=jax; on the {backend} backend use strategy='mirrored' (local "
            "devices, TensorFlow) or 'multi_worker' (TF_CONFIG, TensorFlow). "
            f"Received: strategy={name!r}"
        )


def check_no_caller_scope(name):
    """Refuses to start `train()` inside a caller's `tf.distribute` strategy scope.

    Args:
        name: str. The run's `strategy` setting, named in the message.

    Raises:
        ValueError: when a `tf.distribute` strategy scope is open.
    """
    tf = sys.modules.get("tensorflow")  # no scope can be open if TensorFlow was never imported
    if tf is None or not tf.distribute.has_strategy():
        return
    # One rule for every strategy: the run's config.json must say how it trained, and two
    # MirroredStrategy objects in one process reuse collective keys (a shape-mismatch abort).
    raise ValueError(
        'train() builds its own strategy from the run configuration\'s "strategy" key '
        f"({name!r}); call it outside your {type(tf.distribute.get_strategy()).__name__} scope "
        'and set "strategy": "mirrored" (local devices) or "multi_worker" (TF_CONFIG).'
    )


def _tensorflow():
    import tensorflow as tf

    return tf


def make_multi_worker_strategy():
    """A `MultiWorkerMirroredStrategy` (cluster from `TF_CONFIG`) that Keras 3's `fit` can use.

    Raises:
        ValueError: when `TF_CONFIG` is not set or is not JSON with a `cluster` and a `task`.
    """
    tf = _tensorflow()
    check_tf_config(os.environ.get("TF_CONFIG"))

    # Keras 3.15's `fit` reduces a nest in one call and scalars with `axis=0`, which the
    # TensorFlow strategy rejects with several workers (keras-team/keras#20585).
    class KerasMultiWorkerMirroredStrategy(tf.distribute.MultiWorkerMirroredStrategy):
        """`reduce` over a nest, reducing a scalar across replicas only."""

        def reduce(self, reduce_op, value, axis):
            base = super()

            def reduce_one(tensor):
                rank = getattr(getattr(tensor, "shape", None), "rank", None)
                return base.reduce(reduce_op, tensor, None if rank == 0 else axis)

            return tf.nest.map_structure(reduce_one, value)

    return KerasMultiWorkerMirroredStrategy()


def check_tf_config(text):
    """Checks the `TF_CONFIG` of a multi-worker run.

    Raises:
        ValueError: naming what is missing and an example.
    """
    example = (
        '{"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
        '"task": {"type": "worker", "index": 0}}'
    )
    if not text:
        raise ValueError(
            "strategy='multi_worker' reads the cluster from the TF_CONFIG environment variable, "
            f"which is not set; set it on every worker, e.g. TF_CONFIG='{example}'."
        )
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}). Example: {example}") from error
    if not isinstance(config, dict) or "cluster" not in config or "task" not in config:
        raise ValueError(
            f"TF_CONFIG needs a `cluster` and a `task` entry, e.g. {example}. Received: {text}"
        )


def make_strategy(name):
    """The distribution of a `strategy` setting.

    Args:
        name: str. One of `STRATEGIES`.

    Returns:
        `None`, the process's `tf.distribute.Strategy` of that name, or a `DataParallel`.

    Examples:
    >>> make_strategy("mirrored").num_replicas_in_sync  # doctest: +SKIP
    2
    """
    check_strategy(name)
    if name == "data_parallel":
        return keras.distribution.DataParallel()
    if name == "default":
        return None
    key = (name, os.environ.get("TF_CONFIG") if name == "multi_worker" else None)
    if key not in _PROCESS_STRATEGIES:
        if name == "mirrored":
            _PROCESS_STRATEGIES[key] = _tensorflow().distribute.MirroredStrategy()
        else:
            _PROCESS_STRATEGIES[key] = make_multi_worker_strategy()
    return _PROCESS_STRATEGIES[key]


# One tf.distribute strategy a setting per process: a second `MirroredStrategy` reuses the first
# one's collective keys and fails with "Shape mismatch in the collective instance".
_PROCESS_STRATEGIES = {}


@contextlib.contextmanager
def strategy_scope(strategy):
    """The strategy's scope, or its global `keras.distribution` until exit, or nothing."""
    if strategy is None:
        yield
        return
    if isinstance(strategy, (keras.distribution.DataParallel, keras.distribution.ModelParallel)):
        previous = keras.distribution.distribution()
        keras.distribution.set_distribution(strategy)
        try:
            yield
        finally:
            keras.distribution.set_distribution(previous)
        return
    with strategy.scope():
        yield


# What a resumed run reads: the backup, the method's state, the best checkpoint and its value,
# the history. Non-chief workers start from the chief's copy, so that every worker takes the same
# decisions (saving a best model creates variables, which is collective under the strategy).
RESUME_FILES = ("backup", "state", "best.keras", "best.keras.json", "history.json")


@contextlib.contextmanager
def worker_output_dir(output_dir, strategy, resume_from=RESUME_FILES):
    """`output_dir` on the chief; on other workers a scratch copy of it, removed on exit.

    Args:
        output_dir: str. The run folder.
        strategy: the run's strategy.
        resume_from: tuple of str. What the scratch folder copies. Defaults to `RESUME_FILES`.

    Yields:
        str. The folder this worker writes to.
    """
    if is_chief(strategy):
        yield output_dir
        return
    resolver = strategy.cluster_resolver
    scratch = tempfile.mkdtemp(prefix=f"keras_dml_{resolver.task_type}{resolver.task_id}_")
    for name in resume_from:
        source = os.path.join(output_dir, name)
        if os.path.isdir(source):
            shutil.copytree(source, os.path.join(scratch, name))
        elif os.path.isfile(source):
            shutil.copy2(source, os.path.join(scratch, name))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
