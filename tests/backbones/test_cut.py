"""Tests of keras_dml.backbones.cut (sub-models between split points) and the Caffe pool."""

import keras
import numpy as np
import pytest

from keras_dml import backbones
from tests.support.helpers import roundtrip, tiny_images


def _np(x):
    return keras.ops.convert_to_numpy(x)


def test_cut_googlenet_into_abe_parts(googlenet):
    S = backbones.cut(googlenet, end="pool3")
    C = backbones.cut(googlenet, start="pool3", end="inception_4e")
    G = backbones.cut(googlenet, start="inception_4e")
    assert S.output_shape == (None, 4, 4, 480) and C.input_shape == (None, 4, 4, 480)
    assert C.output_shape == (None, 4, 4, 832) and G.output_shape == (None, 2, 2, 1024)
    assert C.get_layer("inception_4a_1x1") is googlenet.get_layer("inception_4a_1x1")
    assert "inception_3b" not in [la.name for la in C.layers]
    images = tiny_images(n=2, size=64)
    np.testing.assert_allclose(_np(G(C(S(images)))), _np(googlenet(images)), atol=1e-4)
    again = backbones.cut(googlenet, start="pool3", end="inception_4e")
    np.testing.assert_allclose(_np(again(S(images))), _np(C(S(images))), atol=1e-6)
    reloaded = roundtrip(C)
    x = _np(S(images))
    np.testing.assert_allclose(_np(reloaded(x)), _np(C(x)), atol=1e-5)


def test_cut_residual_graph_by_split_point_names():
    model = backbones.get("mobilenet_v2", input_shape=(32, 32, 3), alpha=0.35)
    head = backbones.cut(model, end="block_5")
    tail = backbones.cut(model, start="block_5")
    assert head.layers[-1].name == "block_5_add"
    images = tiny_images(n=2, size=32)
    np.testing.assert_allclose(_np(tail(head(images))), _np(model(images)), atol=1e-4)
    with pytest.raises(ValueError, match="also needs the model input"):
        backbones.cut(model, start="block_2_expand_relu", end="block_2_add")


def test_cut_errors(googlenet):
    with pytest.raises(ValueError, match="also needs the model input"):
        backbones.cut(googlenet, start="inception_4e", end="pool3")
    with pytest.raises(ValueError, match="no layer or split point named 'pool9'"):
        backbones.cut(googlenet, end="pool9")
    with pytest.raises(ValueError, match="empty"):
        backbones.cut(googlenet, start="pool3", end="pool3")


@pytest.mark.parametrize("size", [7, 8])
def test_caffe_pool_matches_caffe_ceil_mode(size):
    from keras_dml.backbones.blocks import caffe_pool

    x = np.random.default_rng(0).random((1, size, size, 2)).astype("float32")
    inputs = keras.Input((size, size, 2))
    out = _np(keras.Model(inputs, caffe_pool(inputs, "pool"))(x))
    n = -(-(size - 3) // 2) + 1  # Caffe: ceil((H - k) / s) + 1
    expected = np.array(
        [
            [x[0, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].max(axis=(0, 1)) for j in range(n)]
            for i in range(n)
        ]
    )
    np.testing.assert_allclose(out[0], expected)
