"""`vgg_small`: a VGG-style ConvNet (two 3x3 convolutions per block) for 32-64 px images."""

import keras

from keras_dml.backbones.blocks import conv_block
from keras_dml.backbones.registry import BackboneSpec, register_backbone

DEFAULT_WIDTH = (64, 128, 256)


def _check_options(width, convs_per_block):
    if isinstance(width, int):
        width = (width, 2 * width, 4 * width)
    width = tuple(width)
    if not width or not all(isinstance(w, int) and w > 0 for w in width):
        raise ValueError(
            "`width` must be a positive int (channels of block1, doubled per block, 3 blocks) "
            f"or a tuple of positive ints (one per block). Received: width={width}"
        )
    if not isinstance(convs_per_block, int) or convs_per_block < 1:
        raise ValueError(
            f"`convs_per_block` must be a positive int. Received: convs_per_block={convs_per_block}"
        )
    return width


def vgg_small_split_points(width=DEFAULT_WIDTH, convs_per_block=2, batchnorm=True):
    """Split points `block1` .. `blockN` (the pooled block outputs) and `features` (= `blockN`)."""
    width = _check_options(width, convs_per_block)
    del batchnorm
    points = {f"block{i}": f"block{i}" for i in range(1, len(width) + 1)}
    points["features"] = f"block{len(width)}"
    return points


def build_vgg_small(images, imagenet, width=DEFAULT_WIDTH, convs_per_block=2, batchnorm=True):
    """Blocks of `convs_per_block` x (3x3 conv - BatchNorm - ReLU), then 2x2 max pooling.

    `width`: channels per block; an int `w` means `(w, 2w, 4w)`. Raises `ValueError` for invalid
    options or requested ImageNet weights.

    References:
        Simonyan & Zisserman, "Very Deep Convolutional Networks for Large-Scale Image
        Recognition", ICLR 2015.
    """
    if imagenet:
        raise ValueError(
            "The 'vgg_small' backbone is trained from scratch; it has no ImageNet weights. "
            "Use weights=None, a local weights file, or a pretrained backbone such as 'resnet50'."
        )
    width = _check_options(width, convs_per_block)
    x = images
    for index, filters in enumerate(width, start=1):
        for conv in range(1, convs_per_block + 1):
            x = conv_block(x, filters, 3, f"block{index}_conv{conv}", batchnorm=batchnorm)
        x = keras.layers.MaxPooling2D(2, name=f"block{index}")(x)
    return x


SPEC = register_backbone(
    BackboneSpec(
        name="vgg_small",
        build=build_vgg_small,
        normalization={"mode": "tf"},
        split_points=vgg_small_split_points,
        options={"width": DEFAULT_WIDTH, "convs_per_block": 2, "batchnorm": True},
        min_size=8,
        channels=None,
        description="VGG-style ConvNet, 2 x (3x3 conv-BN-ReLU) + pool per block, 64-128-256.",
    )
)
