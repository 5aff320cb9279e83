"""A keras-hub backbone's graph replayed inside a keras-dml backbone, with named split points."""

import math

import keras

from keras_dml.backbones.cut import replay
from keras_dml.backbones.hub.layers import KerasHubLayer, MapToTokens, TokensToMap

# `stage<k>` is a CNN's map at stride 2**k (keras-hub's pyramid level `P<k>`), or, on a ViT, the
# patch-token map after a quarter (stage2), half (stage3) and three quarters (stage4) of its
# blocks; `features` is the last map.
POINTS = ("stage1", "stage2", "stage3", "stage4", "stage5", "features")
VIT_STAGES = {"stage2": 1 / 4, "stage3": 2 / 4, "stage4": 3 / 4}
FAMILIES = "CNNs with a 4-D output (ResNet, EfficientNet, MobileNet, ...) and ViTs (ViT, DINOv2)"


def family_of(hub):
    """`"vit"`, `"cnn"` or `"tokens"`: how the backbone's output becomes a feature map."""
    if type(hub).__name__ == "ViTBackbone":
        return "vit"
    outputs = hub.outputs
    if len(outputs) == 1 and len(outputs[0].shape) == 4:
        return "cnn"
    if len(outputs) == 1 and len(outputs[0].shape) == 3 and "patch_size" in hub.get_config():
        return "tokens"
    raise ValueError(
        f"The keras-hub backbone {type(hub).__name__} is not an image backbone keras-dml can "
        f"use (outputs {[tuple(o.shape) for o in outputs]}); it takes {FAMILIES}."
    )


def _wrap_hub_layers(operation):
    """keras-hub's own layers go in a `KerasHubLayer` (they save by class path)."""
    if type(operation).__module__.startswith("keras_hub."):
        return KerasHubLayer.wrapping(operation)
    return operation


def _grid(hub, size):
    patch = hub.get_config()["patch_size"]
    patch = (patch, patch) if isinstance(patch, int) else tuple(patch)
    return size[0] // patch[0], size[1] // patch[1]


def vit_stages(num_layers):
    """`{block number: stage name}` of a ViT with `num_layers` blocks.

    Examples:
    >>> vit_stages(12)
    {3: 'stage2', 6: 'stage3', 9: 'stage4'}
    """
    stages = {}
    for stage, fraction in VIT_STAGES.items():
        stages.setdefault(max(1, math.ceil(num_layers * fraction)), stage)
    return stages


def vit_graph(hub, images):
    """A ViT block by block, its tokens as a map (`TokensToMap`) at each stage and at the end."""
    encoder = hub.get_layer("vit_encoder")
    grid = _grid(hub, tuple(images.shape[1:3]))
    prefix = int(bool(hub.use_class_token))
    tokens = KerasHubLayer.wrapping(hub.get_layer("vit_patching_and_embedding"))(images)
    tokens = encoder.dropout(tokens)
    stages = vit_stages(len(encoder.encoder_layers))
    for number, block in enumerate(encoder.encoder_layers, start=1):
        tokens = KerasHubLayer.wrapping(block)(tokens)
        if number in stages:
            stage_map = TokensToMap(grid, prefix, name=stages[number])(tokens)
            tokens = MapToTokens(bool(prefix), name=f"{stages[number]}_tokens")(stage_map)
    tokens = encoder.layer_norm(tokens)
    return TokensToMap(grid, prefix, name="features")(tokens)


def cnn_graph(hub, images):
    """A CNN's graph, with a named identity `stage<k>` after each pyramid level `P<k>`."""
    levels = {
        id(tensor): f"stage{key[1:]}"
        for key, tensor in getattr(hub, "pyramid_outputs", {}).items()
        if f"stage{key[1:]}" in POINTS
    }

    def mark(old, new):
        name = levels.get(id(old))
        return new if name is None else keras.layers.Identity(name=name)(new)

    output = hub.outputs[0]
    values = replay(
        output, {id(hub.inputs[0]): images}, model=hub, wrap=mark, operation_for=_wrap_hub_layers
    )
    return keras.layers.Identity(name="features")(values[id(output)])


def token_graph(hub, images):
    """A transformer's graph, its output tokens as a map (split point `features` only)."""
    output = hub.outputs[0]
    values = replay(output, {id(hub.inputs[0]): images}, model=hub, operation_for=_wrap_hub_layers)
    tokens = values[id(output)]
    grid = _grid(hub, tuple(images.shape[1:3]))
    prefix = int(tokens.shape[1]) - grid[0] * grid[1]
    return TokensToMap(grid, prefix, name="features")(tokens)


GRAPHS = {"vit": vit_graph, "cnn": cnn_graph, "tokens": token_graph}
