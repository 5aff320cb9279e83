"""Every registered method under a 2-replica `MirroredStrategy` equals one device.

Two logical CPUs, the same global batch: the losses logged over two `fit` steps (D&C's and
hierarchical D&C's divide stage included), the weights after them and `evaluate` agree with one
device, because in-batch losses are computed on embeddings gathered from every replica. Runs in a
subprocess: logical devices must be configured before TensorFlow initialises.
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
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras

    from keras_dml import backbones
    from keras_dml.methods import get_method, list_methods
    from tests.support.configs import config_dict
    from keras_dml.methods.defaults import compile_with_config

    CLUSTERED = {"dc": 1, "hdc": 1}


    def build(name):
        spec = get_method(name)
        config = config_dict({
            "method": name, "dataset": "digits", "loss": {"name": "contrastive"},
            "model": {"num_learners": 2, "learner_dim": 8, "num_compositors": 3}
            if name == "dcml" else {},
            # SGD: the update is proportional to the gradient, so a wrong scale shows.
            "optimizer": {"name": "sgd", "learning_rate": 0.5},
        })
        keras.utils.set_random_seed(0)
        # No BatchNorm: batch statistics of a replica's half batch would differ by design.
        backbone = backbones.get("convnet", input_shape=(32, 32, 3), batchnorm=False)
        model = spec.tiny_model(backbone)
        if name == "dcml":  # its tiny model's J_dis samples pairs at random: use the config's
            model = spec.build(config, backbone, {})
        if name == "hdc":
            model.split_learners([0, 0])
        (spec.compile or compile_with_config)(config, model)
        return model


    rng = np.random.default_rng(0)
    images = (rng.random((16, 32, 32, 3)) * 255).astype("float32")
    labels = np.array([0, 1, 2, 3] * 4, dtype="int32")
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert strategy.num_replicas_in_sync == 2
    names = list_methods()
    for name in names:
        targets = labels
        if name in CLUSTERED:
            targets = {"labels": labels, "clusters": np.full((16,), CLUSTERED[name], "int32")}
        single = build(name)
        with strategy.scope():
            mirrored = build(name)
        logs = {}
        for key, model in (("single", single), ("mirrored", mirrored)):
            history = model.fit(images, targets, batch_size=8, epochs=1, shuffle=False, verbose=0)
            logs[key] = (history.history, model.evaluate(images, labels, batch_size=8, verbose=0,
                                                         return_dict=True))
        (h1, e1), (h2, e2) = logs["single"], logs["mirrored"]
        for metric, value in h1.items():
            np.testing.assert_allclose(h2[metric], value, rtol=2e-4, atol=1e-6,
                                       err_msg=f"{name}: {metric}")
        np.testing.assert_allclose(e2["loss"], e1["loss"], rtol=1e-3, err_msg=f"{name}: eval")
        for a, b in zip(single.weights, mirrored.weights):
            np.testing.assert_allclose(
                keras.ops.convert_to_numpy(b), keras.ops.convert_to_numpy(a), rtol=1e-3,
                atol=2e-5, err_msg=f"{name}: {a.path}")
        print("OK", name, flush=True)
    print("ALL", ",".join(names))
    """
)


def run_on_two_cpus(script):
    """Runs `script` in a fresh process (logical devices are set before TensorFlow starts)."""
    root = REPO_ROOT
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result


@pytest.mark.tf_only("tf.distribute.MirroredStrategy is TensorFlow's")
@pytest.mark.slow
def test_every_method_under_mirrored_strategy_matches_one_device():
    result = run_on_two_cpus(SCRIPT)
    names = result.stdout.strip().splitlines()[-1].split(" ", 1)[1].split(",")
    assert {"abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads"} <= set(names)


DEFAULT_LOSS_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras

    from keras_dml import backbones
    from keras_dml.methods import get_method, list_methods
    from tests.support.configs import resolved_dict
    from keras_dml.methods.defaults import compile_with_config

    rng = np.random.default_rng(0)
    images = (rng.random((16, 32, 32, 3)) * 255).astype("float32")
    labels = np.array([0, 1, 2, 3] * 4, dtype="int32")
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    for name in list_methods():
        spec = get_method(name)
        # The method's default loss, as `train` resolves it (4 classes).
        config = resolved_dict({"method": name, "dataset": "digits", "model": dict(spec.tiny)})
        with strategy.scope():
            model = spec.tiny_model(backbones.get("convnet", input_shape=(32, 32, 3), width=4))
            (spec.compile or compile_with_config)(config, model)
        targets = labels
        if name in ("dc", "hdc"):
            targets = {"labels": labels, "clusters": np.zeros_like(labels)}
        history = model.fit(images, targets, batch_size=8, epochs=1, shuffle=False, verbose=0)
        assert np.isfinite(history.history["loss"][0]), name
        print("OK", name, flush=True)
    """
)


@pytest.mark.tf_only("tf.distribute.MirroredStrategy is TensorFlow's")
@pytest.mark.slow
def test_every_method_trains_with_its_default_loss_under_mirrored_strategy():
    """Each method's own loss (e.g. distance-weighted margin, which needs the embedding size
    statically) on embeddings gathered across replicas."""
    result = run_on_two_cpus(DEFAULT_LOSS_SCRIPT)
    assert result.stdout.count("OK ") >= 7
