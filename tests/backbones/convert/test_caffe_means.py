"""The Caffe GoogLeNet normalises with bvlc_googlenet's mean; older saved models keep theirs.

`googlenet` variant "caffe" subtracts 104, 117, 123 (B, G, R: bvlc_googlenet's `mean_value`)
from BGR pixels and stores that mean in its `ImageNormalization` config. Models saved before,
whose layer config says `mode="caffe"` (the VGG/ResNet means 103.939, 116.779, 123.68), still
load with those means: their outputs do not change.
"""

import keras
import numpy as np

from keras_dml import backbones

# An `ImageNormalization` as a GoogLeNet "caffe" saved before the change serialised it.
SAVED_BEFORE = {
    "module": "keras_dml.layers.image_normalization",
    "class_name": "ImageNormalization",
    "config": {
        "name": "image_normalization",
        "trainable": True,
        "dtype": {
            "module": "keras",
            "class_name": "DTypePolicy",
            "config": {"name": "float32"},
            "registered_name": None,
        },
        "mode": "caffe",
        "mean": None,
        "std": None,
        "reverse_channels": None,
    },
    "registered_name": "keras_dml>ImageNormalization",
}
PIXELS = np.random.default_rng(0).uniform(0, 255, (2, 4, 4, 3)).astype("float32")


def _bgr_minus(mean_bgr):
    return PIXELS[..., ::-1] - np.asarray(mean_bgr, dtype="float32")


def _normalize(layer):
    return keras.ops.convert_to_numpy(layer(PIXELS))


def test_caffe_googlenet_subtracts_the_bvlc_googlenet_mean_and_stores_it():
    model = backbones.get("googlenet", input_shape=(64, 64, 3))
    layer = model.get_layer("image_normalization")
    np.testing.assert_allclose(_normalize(layer), _bgr_minus((104.0, 117.0, 123.0)), atol=1e-4)
    config = layer.get_config()
    assert (config["mean"], config["reverse_channels"]) == ([123.0, 117.0, 104.0], True)
    reloaded = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(layer), safe_mode=True
    )
    np.testing.assert_array_equal(_normalize(reloaded), _normalize(layer))


def test_a_model_saved_before_keeps_the_vgg_means():
    layer = keras.saving.deserialize_keras_object(SAVED_BEFORE, safe_mode=True)
    np.testing.assert_allclose(_normalize(layer), _bgr_minus((103.939, 116.779, 123.68)), atol=1e-4)
