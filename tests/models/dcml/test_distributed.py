"""DCML under `tf.distribute.MirroredStrategy` on two logical CPUs equals one device.

Runs in a subprocess: logical devices must be configured before TensorFlow initialises.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import REPO_ROOT

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2
    )
    import keras

    from keras_dml.losses import ContrastiveLoss
    from keras_dml.models.dcml import DCML


    def build():
        keras.utils.set_random_seed(0)
        inputs = keras.Input((16, 16, 3))
        x = keras.layers.Rescaling(1.0 / 127.5, offset=-1.0)(inputs)
        x = keras.layers.Conv2D(8, 3, strides=2)(x)
        backbone = keras.Model(inputs, keras.layers.ReLU()(x))
        model = DCML(backbone, num_learners=2, learner_dim=4, num_compositors=3,
                     loss=ContrastiveLoss(), subtask_loss=ContrastiveLoss())
        # SGD: the update is proportional to the gradient, so a wrong scale shows.
        model.compile(optimizer=keras.optimizers.SGD(0.5))
        return model


    rng = np.random.default_rng(0)
    images = (rng.random((8, 16, 16, 3)) * 255).astype("float32")
    labels = np.array([0, 1, 2, 3, 0, 1, 2, 3], dtype="int32")
    single = build()
    single_logs = single.fit(images, labels, batch_size=8, epochs=1, verbose=0).history
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        mirrored = build()
    mirrored_logs = mirrored.fit(images, labels, batch_size=8, epochs=1, verbose=0).history
    assert strategy.num_replicas_in_sync == 2
    for name in ("loss", "dis_loss", "subtask_loss", "reinforce_loss"):
        np.testing.assert_allclose(mirrored_logs[name], single_logs[name], rtol=1e-4)
    for a, b in zip(single.get_weights(), mirrored.get_weights()):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    print("OK")
    """
)


@pytest.mark.tf_only("tf.distribute.MirroredStrategy is TensorFlow's")
def test_mirrored_strategy_matches_a_single_device():
    root = REPO_ROOT
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-4000:]
