"""Checks every multi-center class loss passes (sub-center ArcFace, SoftTriple).

Their class vectors are `[num_classes * K, dim]` (rows `c*K .. c*K + K - 1` are class `c`'s), so
besides the conventions of `tests/losses/test_class_based.py` these checks make sure a label in
`[num_classes, num_classes * K)` (a row index, not a class) is rejected, that the weights have
that shape, and that a learner's column slice (how ensembles give each learner its own class
vectors) is accepted. Each check takes `(fn, layer_class, k)`.
"""

import os
import tempfile

import keras
import numpy as np
import pytest

from keras_dml import losses
from keras_dml.models import EmbeddingModel
from tests.support.backend_utils import to_numpy, traced, value_and_gradients
from tests.support.helpers import tiny_images, tiny_labels

NUM_CLASSES, DIM = 5, 6


def multi_center_batch(seed, k, batch_size=10, num_classes=NUM_CLASSES, dim=DIM):
    """Labels over some classes (one absent), embeddings, and `[num_classes * k, dim]` weights."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes - 1, size=batch_size).astype("int32")
    embeddings = rng.normal(size=(batch_size, dim)).astype("float32")
    weights = rng.normal(size=(num_classes * k, dim)).astype("float32")
    return labels, embeddings, weights


def layer(cls, k, **kwargs):
    key = "num_sub_centers" if cls is losses.SubCenterArcFaceLoss else "centers_per_class"
    return cls(num_classes=NUM_CLASSES, embedding_dim=DIM, **{key: k}, **kwargs)


def weights_have_k_rows_per_class(fn, cls, k):
    loss_layer = layer(cls, k)
    assert tuple(loss_layer.class_weight_variable.shape) == (NUM_CLASSES * k, DIM)
    assert loss_layer.trainable_weights == [loss_layer.class_weight_variable]
    labels, embeddings, weights = multi_center_batch(0, k)
    loss_layer.class_weight_variable.assign(weights)
    expected = fn(labels, embeddings, weights, **loss_layer.loss_arguments())
    np.testing.assert_allclose(
        float(to_numpy(loss_layer(labels, embeddings))), float(expected), rtol=1e-6
    )


def count_is_the_batch_size_and_empty_batch_is_zero(fn, cls, k):
    labels, embeddings, weights = multi_center_batch(1, k)
    key = layer(cls, k).loss_arguments()
    loss, count = fn(labels, embeddings, weights, return_count=True, **key)
    assert np.isfinite(float(loss)) and int(count) == len(labels)
    empty = fn(np.zeros((0,), "int32"), np.zeros((0, DIM), "float32"), weights, **key)
    assert float(empty) == 0.0


def labels_beyond_the_classes_raise_eagerly_and_give_nan_in_a_graph(fn, cls, k):
    """Label `NUM_CLASSES` is a valid row of the `[C * K, D]` weights but not a class."""
    loss_layer = layer(cls, k)
    labels, embeddings, _ = multi_center_batch(2, k)
    bad = labels.copy()
    bad[3], bad[4] = NUM_CLASSES, NUM_CLASSES * k
    with pytest.raises(
        ValueError, match=rf"labels in \[0, {NUM_CLASSES}\).*labels: \[5, {5 * k}\]"
    ):
        loss_layer(bad, embeddings)
    graph_loss = traced(
        lambda y, x: loss_layer(y, x), [((None,), "int32"), ((None, DIM), "float32")]
    )
    assert np.isfinite(float(graph_loss(labels, embeddings)))
    assert np.isnan(float(graph_loss(bad, embeddings)))


def gradients_are_finite(fn, cls, k):
    labels, embeddings, weights = multi_center_batch(3, k)
    arguments = layer(cls, k).loss_arguments()
    at_center = weights[labels * k].copy()  # cos = 1 with a sub-center: sqrt(1 - cos^2) at 0
    duplicates = embeddings.copy()
    duplicates[1::2] = duplicates[::2]
    for x in (embeddings, at_center, -at_center, duplicates):
        loss, grads = value_and_gradients(lambda e, w: fn(labels, e, w, **arguments), [x, weights])
        assert np.isfinite(float(loss))
        assert all(np.all(np.isfinite(g)) for g in grads) and np.any(grads[1] != 0.0)


def nan_or_inf_embeddings_give_nan(fn, cls, k):
    labels, embeddings, weights = multi_center_batch(4, k)
    arguments = layer(cls, k).loss_arguments()
    for bad in (np.nan, np.inf):
        poisoned = embeddings.copy()
        poisoned[2, 1] = bad
        assert np.isnan(float(fn(labels, poisoned, weights, **arguments))), bad


def graph_with_unknown_batch_matches_eager(fn, cls, k):
    loss_layer = layer(cls, k)
    labels, embeddings, _ = multi_center_batch(5, k)
    graph_loss = traced(
        lambda y, x: loss_layer(y, x, return_count=True),
        [((None, 1), "float32"), ((None, DIM), "float32")],
        jit_compile=True,
    )
    loss, count = graph_loss(labels[:, None].astype("float32"), embeddings)
    np.testing.assert_allclose(
        float(loss), float(to_numpy(loss_layer(labels, embeddings))), rtol=1e-5
    )
    assert int(count) == len(labels)


def config_round_trips(fn, cls, k):
    loss_layer = layer(cls, k)
    restored = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(loss_layer)
    )
    assert type(restored) is cls and restored.get_config() == loss_layer.get_config()
    assert tuple(restored.class_weight_variable.shape) == (NUM_CLASSES * k, DIM)
    restored.class_weight_variable.assign(loss_layer.class_weight_variable)
    labels, embeddings, _ = multi_center_batch(6, k)
    np.testing.assert_allclose(
        float(to_numpy(restored(labels, embeddings))),
        float(to_numpy(loss_layer(labels, embeddings))),
        rtol=1e-6,
    )


def compiled_model_trains_and_round_trips_a_keras_file(fn, cls, k):
    """`EmbeddingModel.compile(loss=layer)`: `fit` moves the centers, `.keras` keeps them."""
    keras.utils.set_random_seed(0)
    inputs = keras.Input((32, 32, 3))
    features = keras.layers.Conv2D(4, 3, strides=4)(keras.layers.Rescaling(1 / 255.0)(inputs))
    model = EmbeddingModel(keras.Model(inputs, features), embedding_dim=DIM)
    loss_layer = layer(cls, k)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=loss_layer)
    before = to_numpy(loss_layer.class_weight_variable).copy()
    labels = tiny_labels(16, NUM_CLASSES)
    history = model.fit(tiny_images(16), labels, batch_size=8, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert not np.allclose(before, to_numpy(loss_layer.class_weight_variable))
    path = os.path.join(tempfile.mkdtemp(), "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path, safe_mode=True)
    assert reloaded.loss_layer.get_config() == loss_layer.get_config()
    np.testing.assert_array_equal(
        to_numpy(reloaded.loss_layer.class_weight_variable),
        to_numpy(loss_layer.class_weight_variable),
    )


def a_learners_column_slice_is_accepted(fn, cls, k):
    """Ensembles pass `W[:, a:b]` (`[C * K, d]`) with a learner's embedding slice."""
    loss_layer = layer(cls, k)
    labels, embeddings, weights = multi_center_batch(7, k)
    loss_layer.class_weight_variable.assign(weights)
    sliced = losses.class_loss_with_weights(
        loss_layer, labels, embeddings[:, 2:5], loss_layer.class_weight_variable[:, 2:5]
    )
    expected = fn(labels, embeddings[:, 2:5], weights[:, 2:5], **loss_layer.loss_arguments())
    np.testing.assert_allclose(float(to_numpy(sliced)), float(expected), rtol=1e-6)


def weights_that_are_not_k_per_class_are_a_one_line_error(fn, cls, k):
    labels, embeddings, weights = multi_center_batch(8, k)
    arguments = layer(cls, k).loss_arguments()
    with pytest.raises(ValueError, match=r"num_classes \* \w+ rows.*shape=\(\d+, 6\)") as error:
        fn(labels, embeddings, weights[:-1], **arguments)
    assert "\n" not in str(error.value)


CHECKS = [
    weights_have_k_rows_per_class,
    count_is_the_batch_size_and_empty_batch_is_zero,
    labels_beyond_the_classes_raise_eagerly_and_give_nan_in_a_graph,
    gradients_are_finite,
    nan_or_inf_embeddings_give_nan,
    graph_with_unknown_batch_matches_eager,
    config_round_trips,
    compiled_model_trains_and_round_trips_a_keras_file,
    a_learners_column_slice_is_accepted,
    weights_that_are_not_k_per_class_are_a_one_line_error,
]
CHECK_IDS = [check.__name__ for check in CHECKS]
