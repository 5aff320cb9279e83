"""Cutting a backbone into ABE's spatial extractor S, attention trunk C and global part G."""

import keras

from keras_dml.backbones import cut

# backbone name -> (branch point, trunk end): S = input..branch point, C = copy of the layers
# after the branch point up to the trunk end, G = everything after the branch point.
DEFAULT_BRANCHES = {
    # The paper (Sec. 4, Fig. 3): S ends at pool3 (after inception 3b, 480 channels), the
    # trunk is inception 4a-4e (no pooling inside, 14x14 at 224 px), G is 4a..5b + embedding.
    "googlenet": ("pool3", "inception_4e"),
    # Same depth ratio on BN-Inception: 3c is its stride-2 block, 4e downsamples again.
    "bn_inception": ("inception_3c", "inception_4d"),
    # ResNet-50: S = conv1..conv3 (stride 8, 512 channels), trunk = a copy of the conv4
    # stage run at stride 8 (its stride-2 1x1 convolutions set to stride 1, as the paper
    # removes the attention module's pooling, Sec. 6.3), G = conv4 + conv5.
    "resnet50": ("conv3", "conv4"),
    # Small ConvNet: S = block1..block2, trunk = a copy of block3 without its pooling.
    "convnet": ("block2", "block3"),
    # VGG-small (3 blocks): S = block1 + block2 (stride 4), trunk = a copy of block3 without
    # its pooling; G = block3. A cut after block1 trailed the baseline (docs/methods/abe.md).
    "vgg_small": ("block2", "block3"),
    # MobileNetV2: S up to stride 8, trunk = blocks 6..12; masks resized when sizes differ.
    "mobilenet_v2": ("block_5", "block_12"),
    # keras-hub: a CNN's stride-8 and stride-16 pyramid levels (as ResNet-50's conv3 and conv4),
    # a ViT's token maps after half and three quarters of its blocks.
    "keras_hub": ("stage3", "stage4"),
}

_POOLINGS = (keras.layers.MaxPooling2D, keras.layers.AveragePooling2D)
_CONVOLUTIONS = (keras.layers.Conv2D, keras.layers.DepthwiseConv2D, keras.layers.SeparableConv2D)


def resolve_branches(backbone, branch_point=None, trunk_end=None):
    """`(branch_point, trunk_end)` as str, the backbone's `DEFAULT_BRANCHES` for those not given."""
    if branch_point is None or trunk_end is None:
        if backbone.name not in DEFAULT_BRANCHES:
            raise ValueError(
                f"No default ABE branch point for backbone {backbone.name!r}; pass "
                "`branch_point` and `trunk_end` (layer or split-point names). Defaults exist "
                f"for {sorted(DEFAULT_BRANCHES)}."
            )
        default_branch, default_end = DEFAULT_BRANCHES[backbone.name]
        branch_point = default_branch if branch_point is None else branch_point
        trunk_end = default_end if trunk_end is None else trunk_end
    return str(branch_point), str(trunk_end)


def _padded_to_same(layer):
    """Whether a `valid` convolution's input comes from a `ZeroPadding2D` of `(k - 1) // 2` each
    side (keras-hub's ResNets), which makes it `same` at stride 1."""
    half = tuple(((k - 1) // 2, (k - 1) // 2) for k in layer.kernel_size)
    for node in layer._inbound_nodes:
        for tensor in node.arguments.keras_tensors:
            source = tensor._keras_history[0]
            if isinstance(source, keras.layers.ZeroPadding2D) and tuple(source.padding) == half:
                return True
    return False


def _keeps_size(layer):
    """Whether a strided layer keeps its weights valid and the spatial size at stride 1."""
    kernel = getattr(layer, "kernel_size", (1, 1))
    return layer.padding == "same" or all(k == 1 for k in kernel) or _padded_to_same(layer)


def _is_downsampling(layer):
    strides = getattr(layer, "strides", None)
    return strides is not None and max(strides) > 1


def copy_segment(backbone, start, end, name, prefix, keep_resolution=False, init="backbone"):
    """A copy of the backbone segment `(start, end]` with its own weights.

    Args:
        backbone: functional `keras.Model`.
        start: str. Split point or layer name; its output is the copy's input.
        end: str or `None`. Split point or layer name of the copy's output (`None`: model output).
        name: str. Name of the returned model.
        prefix: str. Prepended to every copied layer name (keeps `.keras` paths unique).
        keep_resolution: bool. Remove the segment's downsampling (strided pooling becomes an
            identity, strided convolutions valid at stride 1 get stride 1). Defaults to `False`.
        init: str. `"backbone"` (copy the current weights) or `"random"`. Defaults to `"backbone"`.

    Returns:
        Functional `keras.Model` sharing no weights with `backbone`.
    """
    if init not in ("backbone", "random"):
        raise ValueError(f"`init` must be 'backbone' or 'random'. Received: init={init!r}")
    segment = cut(backbone, start=start, end=end)

    def clone_layer(layer):
        config = layer.get_config()
        config["name"] = prefix + layer.name
        if keep_resolution and _is_downsampling(layer):
            if isinstance(layer, _POOLINGS):
                return keras.layers.Identity(name=config["name"])
            if isinstance(layer, _CONVOLUTIONS) and _keeps_size(layer):
                config["strides"] = (1,) * len(layer.strides)
        return layer.__class__.from_config(config)

    copied = keras.models.clone_model(segment, clone_function=clone_layer)
    copied = keras.Model(copied.inputs[0], copied.outputs[0], name=name)
    if init == "backbone":
        for layer in segment.layers:
            if layer.weights:
                copied.get_layer(prefix + layer.name).set_weights(layer.get_weights())
    return copied


def split_backbone(backbone, branch_point):
    """`(S, G)`: the backbone before and after `branch_point`, sharing the backbone's layers."""
    spatial = cut(backbone, end=branch_point, name="spatial_extractor")
    global_part = cut(backbone, start=branch_point, name="global_extractor")
    return spatial, global_part
