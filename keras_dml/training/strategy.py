"""The `strategy` setting of a run: where `train()` builds, compiles and fits the model.

`"default"` trains on the default device; `"mirrored"` replicates the model on the local devices
(`tf.distribute.MirroredStrategy`); `"multi_worker"` on every device of every worker named in
`TF_CONFIG` (`tf.distribute.MultiWorkerMirroredStrategy`); on the JAX backend `"data_parallel"`
shards each batch over the local devices (`keras.distribution.DataParallel`). In-batch losses
see the global batch under the TensorFlow strategies (`keras_dml.models.distribution`).

Keras 3.15's TensorFlow trainer calls `strategy.reduce` in two ways that
`MultiWorkerMirroredStrategy` rejects once there is more than one worker (keras-team/keras
issue 20585): `_maybe_symbolic_build` reduces the whole first batch, a nest `(images, labels)`,
in one call ("Attempt to convert a value (PerReplica ...) with an unsupported type"), and the
step's log reduction asks for `axis=0` on scalar losses ("Invalid reduction dimension 0 for
input with 0 dimensions"). `KerasMultiWorkerMirroredStrategy` is the public strategy with a
`reduce` that takes nests and reduces a scalar across replicas only, which is what both calls
mean; everything else is TensorFlow's.
"""

import contextlib
import json
import os
import shutil
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
        backend: str or `None`. The Keras backend; defaults to `keras.backend.backend()`.

    Raises:
        ValueError: for an unknown name, a TensorFlow strategy on another backend, or
            `data_parallel` off JAX; the message names the fix.
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


def _tensorflow():
    import tensorflow as tf

    return tf


def make_multi_worker_strategy():
    """A `MultiWorkerMirroredStrategy` (cluster from `TF_CONFIG`) that Keras 3's `fit` can use.

    Returns:
        `KerasMultiWorkerMirroredStrategy`, a `tf.distribute.MultiWorkerMirroredStrategy`.

    Raises:
        ValueError: when `TF_CONFIG` is not set or is not JSON with a `cluster` and a `task`.
    """
    tf = _tensorflow()
    check_tf_config(os.environ.get("TF_CONFIG"))

    class KerasMultiWorkerMirroredStrategy(tf.distribute.MultiWorkerMirroredStrategy):
        """`reduce` over a nest, and a scalar reduced across replicas (see the module)."""

        def reduce(self, reduce_op, value, axis):
            base = super()

            def reduce_one(tensor):
                rank = getattr(getattr(tensor, "shape", None), "rank", None)
                return base.reduce(reduce_op, tensor, None if rank == 0 else axis)

            return tf.nest.map_structure(reduce_one, value)

    return KerasMultiWorkerMirroredStrategy()


def check_tf_config(text):
    """Checks the `TF_CONFIG` of a multi-worker run (JSON with `cluster` and `task`).

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
        name: str. `"default"`, `"mirrored"`, `"multi_worker"` or `"data_parallel"`.

    Returns:
        `None` (`default`), a `tf.distribute.Strategy` (`mirrored`, `multi_worker`; the same
        instance for every run of the process, see `_PROCESS_STRATEGIES`) or a
        `keras.distribution.DataParallel` (`data_parallel`).

    Examples:
    >>> make_strategy("mirrored").num_replicas_in_sync  # doctest: +SKIP
    2
    """
    check_strategy(name)
    if name == "data_parallel":
        return keras.distribution.DataParallel()
    if name == "default":
        return None  # no scope of its own: a caller's `strategy.scope()` still applies
    key = (name, os.environ.get("TF_CONFIG") if name == "multi_worker" else None)
    if key not in _PROCESS_STRATEGIES:
        if name == "mirrored":
            _PROCESS_STRATEGIES[key] = _tensorflow().distribute.MirroredStrategy()
        else:
            _PROCESS_STRATEGIES[key] = make_multi_worker_strategy()
    return _PROCESS_STRATEGIES[key]


# The process's tf.distribute strategies, one a setting. Each new `MirroredStrategy` numbers its
# collective ops from the same keys, while TensorFlow's runtime remembers every key's tensor
# shape for the life of the process: a second strategy's first all-reduce (another model's
# gradients) reuses a key of the first one's and fails with "Shape mismatch in the collective
# instance". One strategy keeps counting, so runs in one process stay independent.
_PROCESS_STRATEGIES = {}


@contextlib.contextmanager
def strategy_scope(strategy):
    """The scope in which the model is built, compiled and fitted.

    `tf.distribute.Strategy.scope()`, or `keras.distribution.set_distribution` for a
    `keras.distribution` distribution (`DataParallel`, `ModelParallel`; the previous global
    distribution is restored on exit), or nothing for `None`.
    """
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
    """`output_dir` on the chief; a temporary folder, removed on exit, on the other workers.

    Every worker runs the same callbacks (checkpoints, backups, logs) but only the chief's files
    are the run's, as in TensorFlow's multi-worker Keras guide: the other workers write theirs
    to a scratch folder so that no two processes write one file. A resumed run starts every
    worker from the chief's checkpoint: the scratch folder begins as a copy of the chief's
    `resume_from` files and folders (taken before the first epoch, so before the chief writes
    again).

    Args:
        output_dir: str. The run folder (shared by the workers' file systems when resuming).
        strategy: the run's strategy.
        resume_from: tuple of str. Files and folders of `output_dir` copied into the scratch
            folder. Defaults to `RESUME_FILES`.

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
