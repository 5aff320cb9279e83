"""Tests of keras_dml.backbones weights: files from another instance, Keras application files,
and the errors for ImageNet weights that cannot be fetched or do not exist."""

import os
import warnings

import keras
import numpy as np
import pytest

from keras_dml import backbones
from tests.support.helpers import tiny_images


def _np(x):
    return keras.ops.convert_to_numpy(x)


def test_weights_file_from_another_instance(tmp_path, googlenet):
    path = os.fspath(tmp_path / "googlenet.weights.h5")
    googlenet.save_weights(path)
    keras.utils.set_random_seed(123)
    loaded = backbones.get("googlenet", weights=path, input_shape=(64, 64, 3))
    images = tiny_images(n=2, size=64)
    np.testing.assert_allclose(_np(loaded(images)), _np(googlenet(images)), atol=1e-5)
    with warnings.catch_warnings(), pytest.raises(ValueError, match="does not fit 'convnet'"):
        warnings.simplefilter("ignore")  # Keras warns about each unmatched group first.
        backbones.get("convnet", weights=path, input_shape=(32, 32, 3))


def test_keras_applications_h5_file(tmp_path):
    """A Keras 2 `*_notop.h5` file (the format Keras downloads) loads by layer order."""
    import h5py
    from keras.src.legacy.saving import legacy_h5_format

    keras.utils.set_random_seed(3)
    reference = keras.applications.MobileNetV2(
        include_top=False, weights=None, input_shape=(32, 32, 3), alpha=0.35
    )
    path = os.fspath(tmp_path / "mobilenet_v2_notop.h5")
    with h5py.File(path, "w") as f:
        legacy_h5_format.save_weights_to_hdf5_group(f, reference)
    model = backbones.get("mobilenet_v2", weights=path, input_shape=(32, 32, 3), alpha=0.35)
    images = tiny_images(n=2, size=32)
    expected = reference(keras.applications.mobilenet_v2.preprocess_input(images.copy()))
    np.testing.assert_allclose(_np(model(images)), _np(expected), atol=1e-4)


def test_imagenet_offline_error_says_how_to_pass_a_file(monkeypatch):
    from keras.src.utils import file_utils

    def offline(fname, origin, **kwargs):
        raise Exception(f"URL fetch failure on {origin}: None -- [Errno -2] Name not known")

    monkeypatch.setattr(file_utils, "get_file", offline)
    with pytest.raises(backbones.WeightsUnavailableError) as info:
        backbones.get("resnet50", weights="imagenet", input_shape=(64, 64, 3))
    message = str(info.value)
    assert "resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5" in message
    assert "weights='/path/" in message and "URL fetch failure" in message
    requested = []
    monkeypatch.setattr(
        file_utils, "get_file", lambda f, o, **k: requested.append(f) or offline(f, o)
    )
    with pytest.raises(backbones.WeightsUnavailableError, match="_0.35_96_no_top.h5"):
        backbones.get("mobilenet_v2", weights="imagenet", input_shape=(96, 96, 3), alpha=0.35)
    assert requested == ["mobilenet_v2_weights_tf_dim_ordering_tf_kernels_0.35_96_no_top.h5"]


@pytest.mark.parametrize("name", ["convnet"])
def test_no_imagenet_weights_error(name):
    with pytest.raises(ValueError, match="weights=") as info:
        backbones.get(name, weights="imagenet", input_shape=(64, 64, 3))
    assert name in str(info.value)
