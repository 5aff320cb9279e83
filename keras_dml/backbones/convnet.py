"""`convnet`: a small four-block ConvNet for 32-64 px images, tests and quick experiments."""

import keras

from keras_dml.backbones.blocks import conv_block
from keras_dml.backbones.registry import BackboneSpec, register_backbone

DEFAULT_WIDTH = (32, 64, 128, 256)


def _check_width(width):
    if isinstance(width, int):
        width = tuple(width * 2**i for i in range(4))
    width = tuple(width)
    if len(width) != 4 or not all(isinstance(w, int) and w > 0 for w in width):
        raise ValueError(
            "`width` must be a positive int (channels of block1, doubled per block) or 4 "
            f"positive ints. Received: width={width}"
        )
    return width


def convnet_split_points(width=DEFAULT_WIDTH, batchnorm=True, pool_last=False):
    """ConvNet split points: `block1` .. `block4` and `features` (= `block4`)."""
    del width, batchnorm, pool_last
    points = {f"block{i}": f"block{i}" for i in range(1, 5)}
    points["features"] = "block4"
    return points


def build_convnet(images, imagenet, width=DEFAULT_WIDTH, batchnorm=True, pool_last=False):
    """Four blocks of 3x3 conv - BatchNorm - ReLU, 2x2 max pooling after blocks 1-3 (and 4).

    `width`: channels per block; an int `w` means `(w, 2w, 4w, 8w)`. `pool_last` pools after block
    4. Raises `ValueError` for an invalid `width` or requested ImageNet weights.
    """
    if imagenet:
        raise ValueError(
            "The 'convnet' backbone is a small network trained from scratch; it has no "
            "ImageNet weights. Use weights=None, a local weights file (weights='/path/"
            "convnet.weights.h5'), or a pretrained backbone such as 'resnet50'."
        )
    width = _check_width(width)
    x = images
    for index, filters in enumerate(width, start=1):
        pooled = index < 4 or pool_last
        x = conv_block(
            x,
            filters,
            3,
            f"block{index}_conv",
            batchnorm=batchnorm,
            output_name=None if pooled else f"block{index}",
        )
        if pooled:
            x = keras.layers.MaxPooling2D(2, name=f"block{index}")(x)
    return x


SPEC = register_backbone(
    BackboneSpec(
        name="convnet",
        build=build_convnet,
        normalization={"mode": "tf"},
        split_points=convnet_split_points,
        options={"width": DEFAULT_WIDTH, "batchnorm": True, "pool_last": False},
        min_size=16,
        channels=None,
        description="Small 4-block ConvNet (conv-BN-ReLU-pool) for 32-64 px inputs and tests.",
    )
)
