"""Shared checks for keras_dml layers and models (build, call, fit, save, export).

Every model family runs through `check_model`; every layer through `check_layer`. Export parity
checks live in `tests/export/` and reuse `tiny_images`.
"""

import os
import tempfile

import keras
import numpy as np


def tiny_images(n=8, size=32, seed=0):
    """Random raw-pixel images in [0, 255], float32, NHWC."""
    rng = np.random.default_rng(seed)
    return (rng.random((n, size, size, 3)) * 255.0).astype("float32")


def tiny_labels(n=8, num_classes=4):
    """Labels with every class present at least twice when n >= 2 * num_classes."""
    return (np.arange(n) % num_classes).astype("int32")


def roundtrip(model_or_layer_model):
    """Saves to `.keras` and loads back with `safe_mode=True`."""
    path = os.path.join(tempfile.mkdtemp(), "model.keras")
    model_or_layer_model.save(path)
    return keras.saving.load_model(path, safe_mode=True, compile=False)


def check_model(model, images, labels, loss=None, fit_kwargs=None, atol=1e-5):
    """Build, symbolic call, eager call, one `fit` step and a `.keras` round trip.

    Args:
        model: a keras_dml model (output = one `[N, D]` embedding).
        images: float32 array `[N, H, W, 3]` of raw pixels.
        labels: int array `[N]`.
        loss: loss for `compile` when the model does not compile itself. Defaults to `None`.
        fit_kwargs: extra arguments for `fit` (e.g. a dataset instead of arrays).
        atol: tolerance of the round-trip comparison.

    Returns:
        The reloaded model.
    """
    dim = sum(model.learner_dims)
    symbolic = model(keras.Input(shape=images.shape[1:]))
    assert tuple(symbolic.shape) == (None, dim), symbolic.shape

    eager = keras.ops.convert_to_numpy(model(images, training=False))
    assert eager.shape == (len(images), dim)
    assert np.all(np.isfinite(eager))
    for k, learner in enumerate(model.learner_embeddings(images)):
        norms = np.linalg.norm(keras.ops.convert_to_numpy(learner), axis=1)
        np.testing.assert_allclose(norms, 1.0, atol=1e-4, err_msg=f"learner {k} not normalised")

    if not model.compiled:
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=loss)
    before = [keras.ops.convert_to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(
        images, labels, batch_size=len(images), epochs=1, verbose=0, **(fit_kwargs or {})
    )
    assert np.isfinite(history.history["loss"][-1])
    after = [keras.ops.convert_to_numpy(w) for w in model.trainable_weights]
    assert any(not np.allclose(b, a) for b, a in zip(before, after)), "fit changed no weight"

    reloaded = roundtrip(model)
    expected = keras.ops.convert_to_numpy(model(images, training=False))
    actual = keras.ops.convert_to_numpy(reloaded(images, training=False))
    np.testing.assert_allclose(actual, expected, atol=atol)
    assert type(reloaded) is type(model)
    return reloaded


def check_layer(layer, input_shape, inputs=None, seed=0):
    """Build, symbolic and eager call, `get_config` and `.keras` round trips of a layer."""
    if inputs is None:
        inputs = np.random.default_rng(seed).standard_normal((2, *input_shape)).astype("float32")
    symbolic_in = keras.Input(shape=input_shape)
    symbolic_out = layer(symbolic_in)
    model = keras.Model(symbolic_in, symbolic_out)
    eager = keras.ops.convert_to_numpy(layer(inputs))
    assert eager.shape[1:] == tuple(symbolic_out.shape[1:])
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    reloaded = roundtrip(model)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(reloaded(inputs)),
        keras.ops.convert_to_numpy(model(inputs)),
        atol=1e-6,
    )
    return reloaded


def benchmark_script(name):
    """The module `benchmarks.<name>` (e.g. `"speed.train_step"`), imported from the checkout."""
    import importlib

    return importlib.import_module(f"benchmarks.{name}")


def colour_splits():
    """Train / val / test splits of 8 classes x 6 noisy flat-colour 32 x 32 images (seeded)."""
    from keras_dml.data import from_arrays

    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(8), 6)
    colours = rng.integers(0, 256, size=(8, 1, 1, 3))
    images = np.clip(colours[labels] + rng.integers(-40, 40, (48, 32, 32, 3)), 0, 255)
    images = images.astype("uint8")
    return {s: from_arrays(images, labels, split=s) for s in ("train", "val", "test")}
