"""Checks every pair loss passes, called from its own `tests/losses/test_<name>.py`.

Each check takes a loss instance (a `keras_dml.losses.MetricLoss`) or its pure function and
asserts one convention of `keras_dml.losses`: 0.0 with zero gradients for a batch without a
positive or a negative pair, finite gradients (also for duplicate embeddings), a config and
`.keras` round trip, graph mode with an unknown batch size, `model.fit`, and `pair_mask`
restricting the loss to the pairs a miner chose.
"""

import os
import tempfile

import keras
import numpy as np

from tests.support.backend_utils import gradients, to_numpy, traced, value_and_gradients

DIM = 8


def batch(seed=0, n=8, num_classes=4, dim=DIM):
    """`n` labels cycling over `num_classes` and normal float32 embeddings."""
    rng = np.random.default_rng(seed)
    labels = (np.arange(n) % num_classes).astype("int32")
    return labels, rng.normal(size=(n, dim)).astype("float32")


def degenerate_batches_give_zero(loss_obj):
    """One class (no negative) and distinct classes (no positive): 0.0, count 0, zero grads."""
    embeddings = np.random.default_rng(1).normal(size=(6, DIM)).astype("float32")
    for labels in ([3] * 6, [0, 1, 2, 3, 4, 5]):
        labels = np.asarray(labels, "int32")
        loss, count = loss_obj.loss_and_count(labels, embeddings)
        (gradient,) = gradients(lambda x, y=labels: loss_obj(y, x), [embeddings])
        assert float(loss) == 0.0 and int(count) == 0, labels
        assert np.all(np.isfinite(gradient)) and np.all(gradient == 0.0), labels


def gradients_are_finite(loss_obj):
    """A regular batch and one with duplicate embeddings (positives at distance 0)."""
    labels, embeddings = batch()
    duplicates = np.repeat(embeddings[:4], 2, axis=0)
    for x, y in ((embeddings, labels), (duplicates, np.repeat(labels[:4], 2))):
        loss, (gradient,) = value_and_gradients(lambda e, y=y: loss_obj(y, e), [x])
        assert np.isfinite(float(loss)) and float(loss) > 0.0
        assert np.all(np.isfinite(gradient)) and np.abs(gradient).sum() > 0.0


def config_round_trips(loss_obj):
    """`serialize`/`deserialize`, and a `.keras` file of a model compiled with the loss."""
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(loss_obj))
    assert type(restored) is type(loss_obj)
    assert restored.get_config() == loss_obj.get_config()
    labels, embeddings = batch()
    np.testing.assert_allclose(
        float(restored(labels, embeddings)), float(loss_obj(labels, embeddings)), rtol=1e-6
    )
    model = keras.Sequential([keras.Input((DIM,)), keras.layers.Dense(DIM)])
    model.compile(optimizer="sgd", loss=loss_obj)
    path = os.path.join(tempfile.mkdtemp(), "model.keras")
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True, compile=True)
    assert type(loaded.loss) is type(loss_obj)
    assert loaded.loss.get_config() == loss_obj.get_config()


def graph_mode_matches_eager(loss_obj):
    """A traced call with an unknown batch size gives the eager value and count."""
    labels, embeddings = batch()
    graph_loss = traced(
        lambda y, x: loss_obj.loss_and_count(y, x), [((None,), "int32"), ((None, DIM), "float32")]
    )
    loss, count = graph_loss(labels, embeddings)
    eager_loss, eager_count = loss_obj.loss_and_count(labels, embeddings)
    np.testing.assert_allclose(float(loss), float(eager_loss), rtol=1e-5)
    assert int(count) == int(eager_count) > 0


def fit_moves_the_weights(loss_obj):
    """`model.compile(loss=...)` and one epoch of `fit` change the model's weights."""
    labels, _ = batch(n=16)
    inputs = np.random.default_rng(3).normal(size=(16, 5)).astype("float32")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(DIM)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss_obj)
    before = [to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(inputs, labels, batch_size=8, epochs=1, shuffle=False, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert any(not np.allclose(b, to_numpy(w)) for b, w in zip(before, model.trainable_weights))


def pair_mask_selects_pairs(fn, **kwargs):
    """A `pair_mask` keeping only the pairs inside a subset equals the loss of the subset."""
    labels, embeddings = batch(seed=4, n=10, num_classes=3)
    keep = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 0], bool)
    pair_mask = np.outer(keep, keep)
    masked = fn(labels, embeddings, pair_mask=pair_mask, **kwargs)
    subset = fn(labels[keep], embeddings[keep], **kwargs)
    full = fn(labels, embeddings, **kwargs)
    np.testing.assert_allclose(float(masked), float(subset), rtol=1e-5)
    assert abs(float(masked) - float(full)) > 1e-3


# The checks that take a loss instance, for `@pytest.mark.parametrize("check", LOSS_CHECKS)`.
LOSS_CHECKS = [
    degenerate_batches_give_zero,
    gradients_are_finite,
    config_round_trips,
    graph_mode_matches_eager,
    fit_moves_the_weights,
]
LOSS_CHECK_IDS = [check.__name__ for check in LOSS_CHECKS]
