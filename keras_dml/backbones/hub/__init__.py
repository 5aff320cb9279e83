"""Any keras-hub image backbone as the keras-dml backbone `keras_hub` (its option: `preset`)."""

import keras

from keras_dml.backbones.hub.graph import GRAPHS, POINTS, family_of
from keras_dml.backbones.hub.layers import KerasHubLayer, MapToTokens, TokensToMap
from keras_dml.backbones.hub.preset import (
    HANDLE_FORMS,
    converter_settings,
    load_backbone,
    normalization_of,
    preset_json,
)
from keras_dml.backbones.registry import BackboneSpec, register_backbone

NAME = "keras_hub"


def parse_backbone(value):
    """A `--backbone` value as the run configuration's `backbone` entry.

    Examples:
    >>> parse_backbone("keras_hub:presets/vit")
    {'name': 'keras_hub', 'preset': 'presets/vit'}
    >>> parse_backbone("resnet50")
    {'name': 'resnet50'}
    """
    name, colon, preset = str(value).partition(":")
    if colon and name == NAME:
        return {"name": NAME, "preset": preset}
    return {"name": str(value)}


def _check_preset(preset):
    if not preset:
        raise ValueError(
            f"Backbone 'keras_hub' needs a `preset`: {HANDLE_FORMS}, e.g. "
            "--backbone keras_hub:./my_vit_preset"
        )
    return str(preset)


def _image_shape(preset, size, pretrained):
    """The input shape to build the preset at: the data's size unless weights fix another."""
    fixed = (preset_json(preset, "config.json") or {}).get("config", {}).get("image_shape")
    if not fixed or pretrained:
        return None  # a size-free CNN, or pretrained weights of the preset's own size
    return (*size, fixed[-1])


def build_keras_hub(images, imagenet, preset=None):
    """The preset's backbone from the normalised input to its last feature map.

    `imagenet` loads the preset's pretrained weights; a backbone whose weights fix its input size
    (a ViT's position embeddings) then gets the input resized to that size.
    """
    preset = _check_preset(preset)
    size = tuple(images.shape[1:3])
    hub = load_backbone(
        preset, load_weights=bool(imagenet), image_shape=_image_shape(preset, size, bool(imagenet))
    )
    family = family_of(hub)
    fixed = tuple(hub.inputs[0].shape[1:3])
    if all(isinstance(side, int) for side in fixed) and fixed != size:
        images = keras.layers.Resizing(*fixed, name="hub_resize")(images)
    return GRAPHS[family](hub, images)


def keras_hub_normalization(preset=None):
    """The preset image converter's `x * scale + offset` as `ImageNormalization` arguments."""
    if preset is None:
        return {"mode": "none"}
    scale, offset, _ = converter_settings(preset)
    return normalization_of(scale, offset)


SPEC = register_backbone(
    BackboneSpec(
        name=NAME,
        build=build_keras_hub,
        normalization=keras_hub_normalization,
        split_points={name: name for name in POINTS},
        options={"preset": None},
        min_size=32,
        description="any keras-hub image backbone: preset folder, kaggle:// or hf:// handle "
        "(needs keras-hub)",
    )
)

__all__ = ["KerasHubLayer", "MapToTokens", "TokensToMap", "parse_backbone"]
