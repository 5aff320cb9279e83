"""Tests of keras_dml.layers.image_normalization.ImageNormalization."""

import keras
import numpy as np
import pytest
from keras.applications import imagenet_utils, mobilenet_v2, resnet50

from keras_dml.layers.image_normalization import ImageNormalization
from tests.support.helpers import check_layer, tiny_images


def _run(layer, x):
    return keras.ops.convert_to_numpy(layer(x))


@pytest.mark.parametrize(
    "mode, reference",
    [
        ("caffe", resnet50.preprocess_input),
        ("torch", lambda x: imagenet_utils.preprocess_input(x, mode="torch")),
        ("tf", mobilenet_v2.preprocess_input),
    ],
)
def test_matches_keras_preprocess_input(mode, reference):
    images = tiny_images(n=4, size=8)
    expected = reference(images.copy())
    np.testing.assert_allclose(_run(ImageNormalization(mode), images), expected, atol=1e-5)


def test_caffe_reverses_channels_and_subtracts_bgr_mean():
    pixel = np.array([[[[10.0, 20.0, 30.0]]]], dtype="float32")
    out = _run(ImageNormalization("caffe"), pixel)
    np.testing.assert_allclose(out[0, 0, 0], [30 - 103.939, 20 - 116.779, 10 - 123.68], atol=1e-4)


def test_none_is_identity_and_custom_uses_pixel_units():
    images = tiny_images(n=2, size=4)
    np.testing.assert_array_equal(_run(ImageNormalization("none"), images), images)
    layer = ImageNormalization("custom", mean=(128.0, 117.0, 104.0), std=2.0, reverse_channels=True)
    expected = ((images - np.array([128.0, 117.0, 104.0])) / 2.0)[..., ::-1]
    np.testing.assert_allclose(_run(layer, images), expected, atol=1e-5)


def test_uint8_input_is_cast_to_float():
    images = tiny_images(n=2, size=4)
    as_uint8 = images.astype("uint8")
    layer = ImageNormalization("tf")
    out = layer(as_uint8)
    assert keras.backend.standardize_dtype(out.dtype) == "float32"
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(out), as_uint8.astype("float32") / 127.5 - 1.0, atol=1e-6
    )
    symbolic = ImageNormalization("caffe")(keras.Input((4, 4, 3), dtype="uint8"))
    assert symbolic.dtype == "float32"


def test_mixed_precision_output_dtype():
    layer = ImageNormalization("caffe", dtype="mixed_float16")
    out = layer(tiny_images(n=1, size=4))
    assert keras.backend.standardize_dtype(out.dtype) == "float16"


@pytest.mark.parametrize("mode", ["caffe", "torch", "tf", "none"])
def test_config_and_keras_roundtrip(mode):
    layer = ImageNormalization(mode)
    inputs = tiny_images(n=2, size=8)
    check_layer(layer, (8, 8, 3), inputs=inputs)
    assert layer.compute_output_shape((None, 8, 8, 3)) == (None, 8, 8, 3)


def test_custom_config_roundtrip():
    layer = ImageNormalization("custom", mean=(1.0, 2.0, 3.0), std=(4.0, 5.0, 6.0))
    reloaded = check_layer(layer, (4, 4, 3), inputs=tiny_images(n=2, size=4))
    config = reloaded.layers[-1].get_config()
    assert config["mean"] == [1.0, 2.0, 3.0] and config["std"] == [4.0, 5.0, 6.0]


def test_custom_scalar_statistics_apply_to_any_channel_count():
    x = np.full((1, 2, 2, 5), 10.0, dtype="float32")
    out = _run(ImageNormalization("custom", mean=4.0, std=3.0), x)
    np.testing.assert_allclose(out, 2.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"mode": "bgr"}, "Unknown normalisation mode"),
        ({"mode": "caffe", "mean": (1.0, 2.0, 3.0)}, "only be set with mode='custom'"),
        ({"mode": "tf", "reverse_channels": True}, "only be set with mode='custom'"),
        ({"mode": "custom", "std": (1.0, 0.0, 1.0)}, "must be positive"),
        ({"mode": "custom", "mean": (1.0, 2.0), "std": (1.0, 2.0, 3.0)}, "same length"),
    ],
)
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ImageNormalization(**kwargs)


def test_channel_mismatch_names_the_shape():
    with pytest.raises(ValueError, match="3 `mean` values but the input has 1 channels"):
        ImageNormalization("caffe")(keras.Input((8, 8, 1)))
