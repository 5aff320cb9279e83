"""Runs under `strategy="mirrored"` in one process are independent.

Each new `tf.distribute.MirroredStrategy` numbered its collective ops from the same keys, and
TensorFlow remembers each key's shape for the life of the process: after ABE trained under one
strategy, the next run's strategy reused its keys for other shapes ("Shape mismatch in the
collective instance") and no other method could train. Runs in a subprocess: logical devices
must be configured before TensorFlow initialises.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT

TWO_RUNS = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras

    from keras_dml.training.strategy import make_strategy, strategy_scope

    x = np.ones((8, 4), "float32")
    for width in (3, 5):  # two runs whose gradients have different shapes
        strategy = make_strategy("mirrored")
        assert strategy.num_replicas_in_sync == 2
        with strategy_scope(strategy):
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(width)])
            model.compile(optimizer="sgd", loss="mse")
        model.fit(x, np.zeros((8, width), "float32"), batch_size=4, epochs=1, verbose=0)
        print("TRAINED", width, flush=True)
    """
)


@pytest.mark.tf_only("tf.distribute.MirroredStrategy is TensorFlow's")
def test_a_second_mirrored_run_in_the_same_process_trains():
    result = subprocess.run(
        [sys.executable, "-c", TWO_RUNS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert "Shape mismatch" not in result.stderr, result.stderr[-3000:]
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.split() == ["TRAINED", "3", "TRAINED", "5"]
