"""Cross-batch memory under data parallelism equals one device: every replica, one memory.

TensorFlow's 2-replica `MirroredStrategy`, for every method, as `tests/methods/test_distributed.py`
with the run configuration's loss a cross-batch memory small enough to wrap around within the two
steps: the logged losses, the evaluation and every weight (the memories included) equal one
device's, and both replicas hold the same memory, because each enqueues the global batch gathered
in replica order. JAX's `keras.distribution.DataParallel` on two host devices: the global batch is
one array, so the memory is one replicated value, and the run equals one device's.
"""

import textwrap

import pytest

from tests.methods.test_distributed import run_on_two_cpus

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    import keras

    from keras_dml import backbones, losses
    from keras_dml.methods import get_method, list_methods
    from tests.support.configs import config_dict
    from keras_dml.methods.defaults import compile_with_config

    XBM = {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 12}
    CLUSTERED = {"dc": 1, "hdc": 1}


    def build(name):
        spec = get_method(name)
        config = config_dict({
            "method": name, "dataset": "digits", "loss": XBM,
            "model": dict(spec.tiny),  # the method's small test model
            # SGD: the update is proportional to the gradient, so a wrong scale shows.
            "optimizer": {"name": "sgd", "learning_rate": 0.5},
        })
        keras.utils.set_random_seed(0)
        # No BatchNorm: batch statistics of a replica's half batch would differ by design.
        backbone = backbones.get("convnet", input_shape=(32, 32, 3), batchnorm=False)
        if name == "hdc":  # its build reads the training split; the tiny model has 2 masks
            model = spec.tiny_model(backbone)
            model.split_learners([0, 0])
        else:
            model = spec.build(config, backbone, {})
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
        layers = [l for l in mirrored._flatten_layers() if losses.is_memory_loss(l)]
        assert layers, name
        for layer in layers:
            for variable in layer.weights:
                replicas = [keras.ops.convert_to_numpy(r) for r in variable.value.values]
                assert len(replicas) == 2, variable.path
                np.testing.assert_array_equal(replicas[0], replicas[1],
                                              err_msg=f"{name}: {variable.path}")
        # Two global batches of 8 in 12 slots: every memory in use wrapped around.
        assert max(int(keras.ops.convert_to_numpy(l.filled).max()) for l in layers) == 12, name
        print("OK", name, flush=True)
    print("ALL", ",".join(names))
    """
)

JAX_SCRIPT = textwrap.dedent(
    """
    import os

    os.environ["KERAS_BACKEND"] = "jax"
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import jax
    import keras
    import numpy as np

    from keras_dml import backbones, losses
    from keras_dml.models import EmbeddingModel

    assert len(jax.devices()) == 2


    def build():
        keras.utils.set_random_seed(0)
        backbone = backbones.get("convnet", input_shape=(32, 32, 3), batchnorm=False, width=4)
        model = EmbeddingModel(backbone, embedding_dim=8)
        xbm = losses.get({"name": "cross_batch_memory", "loss": {"name": "contrastive"},
                          "memory_size": 12}, embedding_dim=8)
        model.compile(optimizer=keras.optimizers.SGD(0.5), loss=xbm)
        return model, xbm


    rng = np.random.default_rng(0)
    images = (rng.random((16, 32, 32, 3)) * 255).astype("float32")
    labels = np.array([0, 1, 2, 3] * 4, dtype="int32")
    single, _ = build()
    h1 = single.fit(images, labels, batch_size=8, epochs=1, shuffle=False, verbose=0).history
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=jax.devices()))
    parallel, xbm = build()
    h2 = parallel.fit(images, labels, batch_size=8, epochs=1, shuffle=False, verbose=0).history
    np.testing.assert_allclose(h2["loss"], h1["loss"], rtol=1e-4)
    for a, b in zip(single.weights, parallel.weights):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(b), keras.ops.convert_to_numpy(a),
                                   rtol=1e-3, atol=2e-5, err_msg=a.path)
    assert xbm.memory_embeddings.value.sharding.is_fully_replicated
    assert int(keras.ops.convert_to_numpy(xbm.filled)[0]) == 12
    print("OK jax")
    """
)


@pytest.mark.tf_only("tf.distribute.MirroredStrategy is TensorFlow's")
@pytest.mark.slow
def test_cross_batch_memory_under_data_parallelism_matches_one_device():
    result = run_on_two_cpus(SCRIPT)
    names = result.stdout.strip().splitlines()[-1].split(" ", 1)[1].split(",")
    assert {"abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads"} <= set(names)
    assert "OK jax" in run_on_two_cpus(JAX_SCRIPT).stdout
