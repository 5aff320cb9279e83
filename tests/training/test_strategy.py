"""The `strategy` setting: names, backend checks, TF_CONFIG, and `train()` under it.

The two-process multi-worker run is tests/training/test_multi_worker.py; every method under a
2-replica MirroredStrategy is tests/methods/test_distributed.py.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from keras_dml.methods import list_methods
from keras_dml.training.run_config import PRECISIONS, STRATEGIES
from keras_dml.training.strategy import check_strategy, check_tf_config
from keras_dml_cli import build_parser
from tests.support.configs import config_dict
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def tiny_splits():
    from keras_dml.data.datasets import from_arrays

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 6)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    return {
        split: from_arrays(images, labels, split=split, test_fraction=0.3, val_fraction=0.3)
        for split in ("train", "val", "test")
    }


def test_unknown_strategy_is_one_line_naming_the_values():
    with pytest.raises(ValueError, match="multi_worker.*Received: strategy='tpu'") as error:
        config_dict({"method": "baseline", "dataset": "digits", "strategy": "tpu"})
    assert "\n" not in str(error.value)


def test_strategy_and_backend_mismatch_names_the_fix():
    with pytest.raises(ValueError, match="KERAS_BACKEND=jax.*'mirrored'"):
        check_strategy("data_parallel", backend="tensorflow")
    with pytest.raises(ValueError, match="KERAS_BACKEND=tensorflow.*'data_parallel'"):
        check_strategy("multi_worker", backend="jax")
    check_strategy("default", backend="torch")


def test_tf_config_errors_show_an_example():
    with pytest.raises(ValueError, match="TF_CONFIG.*not set.*cluster"):
        check_tf_config(None)
    with pytest.raises(ValueError, match="not valid JSON"):
        check_tf_config("{cluster")
    with pytest.raises(ValueError, match="needs a `cluster` and a `task`"):
        check_tf_config(json.dumps({"cluster": {"worker": ["a:1"]}}))


def test_cli_choices_are_the_config_values():
    parser = build_parser(["evaluate"])
    train = parser._subparsers._group_actions[0].choices["train"]
    choices = {action.dest: action.choices for action in train._actions}
    assert tuple(choices["strategy"]) == STRATEGIES
    assert tuple(choices["precision"]) == PRECISIONS


def test_cli_flags_reach_the_config(tmp_path):
    from keras_dml_cli.run.train import config_from_args

    argv = ["train", "--method", "baseline", "--dataset", "digits", "--output", str(tmp_path)]
    args = build_parser(argv).parse_args(
        [*argv, "--strategy", "mirrored", "--precision", "mixed_bfloat16"]
    )
    config = config_from_args(args)
    assert (config["strategy"], config["precision"]) == ("mirrored", "mixed_bfloat16")


def test_train_builds_compiles_and_fits_inside_the_strategy_scope(tmp_path):
    import keras
    import tensorflow as tf

    from keras_dml.training import train

    config = {
        "method": "baseline",
        "dataset": "arrays",
        "strategy": "mirrored",
        "precision": "mixed_bfloat16",
        "epochs": 1,
        "batch_size": 16,
        "m_per_class": 4,
        "model": {"embedding_dim": 8},
        "backbone": "convnet",
    }
    result = train(config, str(tmp_path), verbose=0, splits=tiny_splits(), report=False)
    model = result["model"]
    assert isinstance(model.distribute_strategy, tf.distribute.MirroredStrategy)
    assert isinstance(model.heads[0].kernel.value, tf.distribute.DistributedValues)
    assert isinstance(model.optimizer.iterations.value, tf.distribute.DistributedValues)
    assert model.backbone.layers[-1].compute_dtype == "bfloat16"
    assert model.heads[0].compute_dtype == "float32"
    assert keras.config.dtype_policy().name == "float32"
    assert not tf.distribute.has_strategy()
    assert result["output_dir"] == str(tmp_path)
    with open(tmp_path / "config.json") as f:
        saved = json.load(f)
    assert (saved["strategy"], saved["precision"]) == ("mirrored", "mixed_bfloat16")


JAX_DATA_PARALLEL = textwrap.dedent(
    """
    import jax
    import keras
    import numpy as np

    from keras_dml.data.datasets import from_arrays
    from keras_dml.training import train

    assert len(jax.devices()) == 2
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(12), 6)
    images = (rng.random((labels.size, 32, 32, 3)) * 255).astype("uint8")
    splits = {s: from_arrays(images, labels, split=s, test_fraction=0.3, val_fraction=0.3)
              for s in ("train", "val", "test")}
    config = {"method": "baseline", "dataset": "arrays", "strategy": "data_parallel",
              "epochs": 1, "batch_size": 16, "m_per_class": 4, "model": {"embedding_dim": 8},
              "backbone": "convnet"}
    result = train(config, "OUT", verbose=0, splits=splits, report=False)
    kernel = result["model"].heads[0].kernel.value
    assert len(kernel.sharding.device_set) == 2, kernel.sharding  # replicated on both devices
    assert keras.distribution.distribution() is None  # restored after the run
    assert np.isfinite(result["history"]["loss"]).all()
    print("DATA_PARALLEL_OK", result["metrics"]["recall@1"])
    """
)


@pytest.mark.slow
def test_data_parallel_on_jax_trains_on_two_devices(tmp_path):
    pytest.importorskip("jax")
    env = {
        **os.environ,
        "KERAS_BACKEND": "jax",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "PYTHONPATH": ROOT,
        "TF_CPP_MIN_LOG_LEVEL": "3",
    }
    script = JAX_DATA_PARALLEL.replace("OUT", str(tmp_path / "run"))
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "DATA_PARALLEL_OK" in result.stdout


EMBED_UNDER_MIRRORED = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras

    from keras_dml.evaluation import embed

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    x = np.random.default_rng(0).random((10, 4)).astype("float32")
    # Keras' own predict_on_batch runs the batch on both replicas: twice the rows.
    assert model.predict_on_batch(x[:5]).shape == (10, 3)
    embeddings, _ = embed(model, x, batch_size=5, verbose=False)
    np.testing.assert_allclose(embeddings, x @ model.weights[0].numpy() + model.weights[1].numpy(),
                               rtol=1e-5, atol=1e-6)
    print("EMBED_OK", embeddings.shape)
    """
)


@pytest.mark.slow
def test_embed_gives_one_row_per_input_under_a_two_replica_strategy():
    """`RetrievalEvaluation` and the test metrics of `train(strategy="mirrored")` embed this way."""
    env = {
        **os.environ,
        "PYTHONPATH": ROOT,
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "CUDA_VISIBLE_DEVICES": "",
    }
    result = subprocess.run(
        [sys.executable, "-c", EMBED_UNDER_MIRRORED],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "EMBED_OK (10, 3)" in result.stdout


def fake_strategy(cluster, task_type, task_id):
    """An object with the `cluster_resolver` of a worker of `cluster` (no TensorFlow server)."""
    import types

    import tensorflow as tf

    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(cluster), task_type=task_type, task_id=task_id
    )
    return types.SimpleNamespace(cluster_resolver=resolver)


def test_chief_is_worker_0_or_the_chief_task():
    from keras_dml.models.distribution import is_chief, num_workers

    workers = {"worker": ["a:1", "b:1"]}
    assert is_chief(fake_strategy(workers, "worker", 0))
    assert not is_chief(fake_strategy(workers, "worker", 1))
    with_chief = {"chief": ["c:1"], "worker": ["a:1", "b:1"]}
    assert is_chief(fake_strategy(with_chief, "chief", 0))
    assert not is_chief(fake_strategy(with_chief, "worker", 0))
    assert num_workers(fake_strategy(with_chief, "worker", 1)) == 3
    assert is_chief(None) and num_workers(None) == 1


def test_non_chief_writes_to_a_removed_copy_of_the_chief_records(tmp_path):
    from keras_dml.training.strategy import RESUME_FILES, worker_output_dir

    run = tmp_path / "run"
    (run / "backup").mkdir(parents=True)
    (run / "backup" / "weights.h5").write_text("w")
    (run / "best.keras.json").write_text("{}")
    (run / "logs").mkdir()
    workers = {"worker": ["a:1", "b:1"]}
    with worker_output_dir(str(run), fake_strategy(workers, "worker", 0)) as folder:
        assert folder == str(run)
    with worker_output_dir(str(run), fake_strategy(workers, "worker", 1)) as folder:
        assert folder != str(run)
        assert sorted(os.listdir(folder)) == ["backup", "best.keras.json"]
        assert (run / "backup" / "weights.h5").read_text() == "w"
        with open(os.path.join(folder, "written_by_worker_1"), "w") as f:
            f.write("x")
    assert not os.path.exists(folder)
    assert "written_by_worker_1" not in os.listdir(run)
    assert {"backup", "state", "best.keras", "best.keras.json", "history.json"} == set(RESUME_FILES)


def test_train_inside_a_callers_strategy_scope_is_refused_at_once(tmp_path):
    """A user's `MirroredStrategy` scope, run after run, every method: refused before writing."""
    import tensorflow as tf

    from keras_dml.methods import get_method
    from keras_dml.training import train

    for method in list_methods():
        config = {
            "method": method,
            "dataset": "arrays",
            "epochs": 1,
            "batch_size": 16,
            "m_per_class": 4,
            "model": dict(get_method(method).tiny),
            "backbone": "convnet",
        }
        for run in range(2):  # a new strategy object each time, as a user's loop makes them
            folder = tmp_path / f"{method}{run}"
            strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
            with strategy.scope(), pytest.raises(ValueError) as error:
                train(config, str(folder), verbose=0, splits=tiny_splits(), report=False)
            message = str(error.value)
            assert "\n" not in message
            assert "\"strategy\" key ('default')" in message, message
            assert "outside your MirroredStrategy scope" in message, message
            assert not folder.exists()
    with tf.distribute.OneDeviceStrategy("/cpu:0").scope(), pytest.raises(ValueError):
        train({**config, "strategy": "mirrored"}, str(tmp_path / "one"), splits=tiny_splits())
