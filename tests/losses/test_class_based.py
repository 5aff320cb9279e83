"""Behaviour shared by the class-based losses: NaN, gradients, label errors, configs, graphs."""

import keras
import numpy as np
import pytest

from keras_dml import losses
from tests.support.backend_utils import dtype_name, traced, value_and_gradients
from tests.support.class_loss_reference import random_batch

NUM_CLASSES, DIM = 7, 6
# registry name -> (pure function, layer class, non-default constructor arguments)
CLASS_LOSSES = {
    "normalized_softmax": (
        losses.normalized_softmax_loss,
        losses.NormalizedSoftmaxLoss,
        {"temperature": 0.1},
    ),
    "proxy_anchor": (losses.proxy_anchor_loss, losses.ProxyAnchorLoss, {"alpha": 16.0}),
    "arcface": (losses.arcface_loss, losses.ArcFaceLoss, {"margin": 0.3, "easy_margin": True}),
    "cosface": (losses.cosface_loss, losses.CosFaceLoss, {"scale": 30.0, "margin": 0.2}),
}
NAMES = sorted(CLASS_LOSSES)


def _layer(name, **kwargs):
    return losses.get(name, num_classes=NUM_CLASSES, embedding_dim=DIM, **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_registered_as_layer_losses(name):
    _, cls, arguments = CLASS_LOSSES[name]
    layer = losses.get(
        {"name": name.replace("_", "-"), **arguments}, num_classes=3, embedding_dim=2
    )
    assert (
        type(layer) is cls and isinstance(layer, keras.layers.Layer) and losses.LOSSES[name] is cls
    )
    assert tuple(layer.class_weight_variable.shape) == (3, 2)
    assert layer.trainable_weights == [layer.class_weight_variable]


@pytest.mark.parametrize("name", NAMES)
def test_count_is_the_batch_size_and_empty_batch_is_zero(name):
    fn, _, _ = CLASS_LOSSES[name]
    labels, embeddings, weights = random_batch(0)
    loss, count = fn(labels, embeddings, weights, return_count=True)
    assert (
        dtype_name(loss) == "float32" and dtype_name(count) == "int32" and int(count) == len(labels)
    )
    empty = fn(np.zeros((0,), "int32"), np.zeros((0, DIM), "float32"), weights)
    assert float(empty) == 0.0


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case", ["random", "at_class_weight", "opposite", "zero", "duplicates"])
def test_gradients_are_finite(name, case):
    fn, _, _ = CLASS_LOSSES[name]
    labels, embeddings, weights = random_batch(1)
    if case == "at_class_weight":  # cos(theta_y) = 1: sqrt(1 - cos^2) at 0 for ArcFace
        embeddings = weights[labels].copy()
    elif case == "opposite":  # cos(theta_y) = -1
        embeddings = -weights[labels]
    elif case == "zero":
        embeddings[0] = 0.0
    elif case == "duplicates":
        embeddings[1::2] = embeddings[::2]
    loss, grads = value_and_gradients(lambda x, w: fn(labels, x, w), [embeddings, weights])
    assert np.isfinite(float(loss))
    for gradient in grads:
        assert np.all(np.isfinite(gradient))
    assert np.any(grads[1] != 0.0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_embeddings_give_nan(name, bad):
    fn, _, _ = CLASS_LOSSES[name]
    labels, embeddings, weights = random_batch(2)
    embeddings[3, 1] = bad
    assert np.isnan(float(fn(labels, embeddings, weights)))
    if not np.isnan(bad):
        return

    compiled = traced(lambda y, x: fn(y, x, weights), jit_compile=True)
    assert np.isnan(float(compiled(labels, embeddings)))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad_label", [NUM_CLASSES, -1])
def test_out_of_range_labels_raise_eagerly(name, bad_label):
    layer = _layer(name)
    labels, embeddings, _ = random_batch(3)
    labels[2] = bad_label
    with pytest.raises(
        ValueError, match=rf"labels in \[0, 7\).*out-of-range labels: \[{bad_label}\]"
    ):
        layer(labels, embeddings)


@pytest.mark.parametrize("name", NAMES)
def test_out_of_range_labels_give_nan_in_a_graph(name):
    layer = _layer(name)
    labels, embeddings, _ = random_batch(3)

    graph_loss = traced(lambda y, x: layer(y, x), [((None,), "int32"), ((None, DIM), "float32")])

    assert np.isfinite(float(graph_loss(labels, embeddings)))
    labels[0] = NUM_CLASSES + 3
    assert np.isnan(float(graph_loss(labels, embeddings)))


@pytest.mark.parametrize("name", NAMES)
def test_graph_with_unknown_batch_matches_eager_and_accepts_keras_label_shapes(name):
    layer = _layer(name)
    labels, embeddings, _ = random_batch(4)

    graph_loss = traced(
        lambda y, x: layer(y, x, return_count=True),
        [((None, 1), "float32"), ((None, DIM), "float32")],
        jit_compile=True,
    )

    loss, count = graph_loss(labels[:, None].astype("float32"), embeddings)
    np.testing.assert_allclose(float(loss), float(layer(labels, embeddings)), rtol=1e-5)
    assert int(count) == len(labels)


@pytest.mark.parametrize("name", NAMES)
def test_float16_embeddings_give_float32_loss(name):
    fn, _, _ = CLASS_LOSSES[name]
    labels, embeddings, weights = random_batch(5)
    half = embeddings.astype("float16")
    loss = fn(labels, half, weights)
    assert dtype_name(loss) == "float32"
    np.testing.assert_allclose(
        float(loss), float(fn(labels, half.astype("f4"), weights)), rtol=1e-6
    )


@pytest.mark.parametrize("name", NAMES)
def test_config_round_trip(name):
    _, cls, arguments = CLASS_LOSSES[name]
    layer = _layer(name, **arguments)
    for argument, value in arguments.items():
        assert getattr(layer, argument) == value
    clone = cls.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(restored) is cls and restored.get_config() == layer.get_config()
    restored.class_weight_variable.assign(layer.class_weight_variable)
    labels, embeddings, _ = random_batch(6)
    np.testing.assert_allclose(
        float(restored(labels, embeddings)), float(layer(labels, embeddings)), rtol=1e-6
    )


@pytest.mark.parametrize("name", NAMES)
def test_shape_errors_name_the_problem(name):
    fn, cls, _ = CLASS_LOSSES[name]
    with pytest.raises(ValueError, match="same dimension"):
        fn([0, 1], np.ones((2, 3), "float32"), np.ones((4, 5), "float32"))
    with pytest.raises(ValueError, match="num_classes, dim"):
        fn([0, 1], np.ones((2, 3), "float32"), np.ones((3,), "float32"))
    with pytest.raises(ValueError, match="num_classes"):
        cls(num_classes=1, embedding_dim=4)
    with pytest.raises(ValueError, match=r"pass num_classes=\.\.\. and embedding_dim=\.\.\."):
        losses.get(name)
    with pytest.raises(ValueError, match="embedding_dim"):
        cls(num_classes=3, embedding_dim=0)


@pytest.mark.parametrize("name", NAMES)
def test_layer_keeps_float32_weights_under_mixed_precision(name):
    keras.mixed_precision.set_dtype_policy("mixed_float16")
    try:
        layer = _layer(name)
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    labels, embeddings, _ = random_batch(7)
    assert layer.class_weight_variable.dtype == "float32"
    assert dtype_name(layer(labels, embeddings.astype("float16"))) == "float32"
