"""`keras_hub` backbones: the preset's own graph, split points, preprocessing and weights."""

import keras
import numpy as np
import pytest

keras_hub = pytest.importorskip("keras_hub")

from keras_dml import backbones  # noqa: E402
from keras_dml.backbones.hub import parse_backbone  # noqa: E402
from keras_dml.backbones.hub.graph import family_of  # noqa: E402

IMAGES = np.random.default_rng(0).uniform(0, 255, (3, 32, 32, 3)).astype("float32")


def hub_and_converter(folder, load_weights=True, image_shape=None):
    kwargs = {} if image_shape is None else {"image_shape": image_shape}
    hub = keras_hub.models.Backbone.from_preset(folder, load_weights=load_weights, **kwargs)
    converter = keras_hub.layers.ImageConverter.from_preset(folder)
    return hub, converter


def converted(converter, images):
    """keras-hub's own preprocessing at the images' size: `x * scale + offset`."""
    scale = np.asarray(converter.scale, "float32")
    offset = np.asarray(converter.offset, "float32")
    return images * scale + offset


def test_a_cnn_gives_its_last_map_and_its_pyramid_levels(resnet_folder):
    model = backbones.get(
        "keras_hub", preset=resnet_folder, weights="imagenet", input_shape=(32, 32, 3)
    )
    names = {layer.name for layer in model.layers}
    assert {"stage2", "stage3", "stage4", "stage5", "features"} <= names
    hub, converter = hub_and_converter(resnet_folder)
    expected = keras.ops.convert_to_numpy(hub(converted(converter, IMAGES)))
    np.testing.assert_allclose(model.predict(IMAGES, verbose=0), expected, atol=1e-4)


def test_a_vit_gives_patch_tokens_as_a_map_with_the_class_token(vit_folder):
    model = backbones.get(
        "keras_hub", preset=vit_folder, weights="imagenet", input_shape=(32, 32, 3)
    )
    assert model.output_shape == (None, 4, 4, 32)  # 32 px / patch 8; patch token, class token
    assert {"stage2", "stage3", "stage4", "features"} <= {layer.name for layer in model.layers}
    hub, converter = hub_and_converter(vit_folder)
    tokens = keras.ops.convert_to_numpy(hub(converted(converter, IMAGES)))
    features = model.predict(IMAGES, verbose=0)
    np.testing.assert_allclose(features[..., :16].reshape(3, 16, 16), tokens[:, 1:], atol=1e-4)
    np.testing.assert_allclose(features[:, 2, 3, 16:], tokens[:, 0], atol=1e-4)


def test_the_preset_preprocessing_is_folded_into_the_model(resnet_folder, vit_folder):
    for folder in (resnet_folder, vit_folder):
        model = backbones.get("keras_hub", preset=folder, input_shape=(32, 32, 3))
        normalize = model.get_layer("image_normalization")
        _, converter = hub_and_converter(folder)
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(normalize(IMAGES)),
            converted(converter, IMAGES),
            rtol=1e-5,
            atol=1e-4,
        )


def test_without_weights_a_vit_is_built_at_the_input_size(vit_folder):
    model = backbones.get("keras_hub", preset=vit_folder, input_shape=(48, 48, 3))
    assert model.output_shape == (None, 6, 6, 32)
    assert "hub_resize" not in {layer.name for layer in model.layers}


def test_pretrained_weights_load_and_fix_the_vit_input_size(vit_folder):
    model = backbones.get(
        "keras_hub", preset=vit_folder, weights="imagenet", input_shape=(48, 48, 3)
    )
    assert model.get_layer("hub_resize").output.shape[1:3] == (32, 32)
    hub, converter = hub_and_converter(vit_folder)
    images = np.random.default_rng(1).uniform(0, 255, (2, 48, 48, 3)).astype("float32")
    resized = keras.layers.Resizing(32, 32)(converted(converter, images))
    tokens = keras.ops.convert_to_numpy(hub(resized))
    features = model.predict(images, verbose=0)
    np.testing.assert_allclose(features[:, 0, 0, 16:], tokens[:, 0], atol=1e-4)


def test_random_initialisation_does_not_take_the_preset_weights(resnet_folder):
    random = backbones.get("keras_hub", preset=resnet_folder, input_shape=(32, 32, 3))
    loaded = backbones.get(
        "keras_hub", preset=resnet_folder, weights="imagenet", input_shape=(32, 32, 3)
    )
    hub, _ = hub_and_converter(resnet_folder)
    kernel = hub.get_layer("conv1_conv").kernel.numpy()
    np.testing.assert_array_equal(loaded.get_layer("conv1_conv").kernel.numpy(), kernel)
    assert not np.allclose(random.get_layer("conv1_conv").kernel.numpy(), kernel)


def test_freeze_batchnorm_reaches_the_hub_layers(resnet_folder):
    model = backbones.get(
        "keras_hub", preset=resnet_folder, input_shape=(32, 32, 3), freeze_batchnorm=True
    )
    norms = [layer for layer in model.layers if isinstance(layer, keras.layers.BatchNormalization)]
    assert len(norms) > 10 and not any(layer.trainable for layer in norms)


def test_a_missing_preset_or_folder_is_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="needs a `preset`") as error:
        backbones.get("keras_hub", input_shape=(32, 32, 3))
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="Cannot load the keras-hub preset folder"):
        backbones.get("keras_hub", preset=str(tmp_path), input_shape=(32, 32, 3))


def test_a_backbone_that_gives_no_image_features_is_refused():
    inputs = keras.Input((8,))
    text_like = keras.Model(inputs, keras.layers.Dense(4)(inputs))
    with pytest.raises(ValueError, match="not an image backbone keras-dml can use"):
        family_of(text_like)


def test_the_cli_value_names_the_backbone_and_its_preset():
    assert parse_backbone("keras_hub:hf://org/vit") == {
        "name": "keras_hub",
        "preset": "hf://org/vit",
    }
    assert parse_backbone("convnet") == {"name": "convnet"}


def test_a_hub_handle_that_cannot_be_fetched_is_refused_in_one_line(monkeypatch):
    from keras_hub.src.utils import preset_utils

    from keras_dml.backbones import WeightsUnavailableError
    from keras_dml.backbones.hub import preset as hub_preset

    def offline(*args, **kwargs):
        raise OSError("Could not reach the hub.\nTraceback details on a second line")

    monkeypatch.setattr(preset_utils, "check_file_exists", offline)
    monkeypatch.setattr(keras_hub.models.Backbone, "from_preset", offline)
    hub_preset._hub_file.cache_clear()
    handle = "kaggle://someone/vit/keras/vit_small/1"
    with pytest.raises(WeightsUnavailableError, match="save it on a machine") as error:
        backbones.get("keras_hub", preset=handle, input_shape=(32, 32, 3))
    assert handle in str(error.value) and "\n" not in str(error.value)
