"""BN-Inception (Inception-v2 of Ioffe & Szegedy 2015) with the paper's block names."""

import keras

from keras_dml.backbones.blocks import caffe_pool, conv_block
from keras_dml.backbones.registry import BackboneSpec, register_backbone

# Regular blocks: (#1x1, #3x3 reduce, #3x3, double #3x3 reduce, double #3x3, pool, pool proj).
# Reduction blocks (stride 2): (#3x3 reduce, #3x3, double #3x3 reduce, double #3x3).
# Figure 5 of Ioffe & Szegedy 2015, as in the widely used Caffe / PyTorch BN-Inception.
BLOCKS = (
    ("inception_3a", (64, 64, 64, 64, 96, "avg", 32)),
    ("inception_3b", (64, 64, 96, 64, 96, "avg", 64)),
    ("inception_3c", (128, 160, 64, 96)),
    ("inception_4a", (224, 64, 96, 96, 128, "avg", 128)),
    ("inception_4b", (192, 96, 128, 96, 128, "avg", 128)),
    ("inception_4c", (160, 128, 160, 128, 160, "avg", 128)),
    ("inception_4d", (96, 128, 192, 160, 192, "avg", 128)),
    ("inception_4e", (128, 192, 192, 256)),
    ("inception_5a", (352, 192, 320, 160, 224, "avg", 128)),
    ("inception_5b", (352, 192, 320, 192, 224, "max", 128)),
)


def _inception(x, name, filters):
    n1, n3r, n3, nd_r, nd, pool_kind, n_proj = filters
    branch1 = conv_block(x, n1, 1, f"{name}_1x1", batchnorm=True)
    branch3 = conv_block(x, n3r, 1, f"{name}_3x3_reduce", batchnorm=True)
    branch3 = conv_block(branch3, n3, 3, f"{name}_3x3", batchnorm=True)
    double = conv_block(x, nd_r, 1, f"{name}_double_3x3_reduce", batchnorm=True)
    double = conv_block(double, nd, 3, f"{name}_double_3x3_1", batchnorm=True)
    double = conv_block(double, nd, 3, f"{name}_double_3x3_2", batchnorm=True)
    if pool_kind == "avg":
        # Caffe average pooling counts the zero padding (PyTorch `count_include_pad=True`).
        pool = keras.layers.ZeroPadding2D(1, name=f"{name}_pool_pad")(x)
        pool = keras.layers.AveragePooling2D(3, strides=1, name=f"{name}_pool")(pool)
    else:
        pool = keras.layers.MaxPooling2D(3, strides=1, padding="same", name=f"{name}_pool")(x)
    pool = conv_block(pool, n_proj, 1, f"{name}_pool_proj", batchnorm=True)
    return keras.layers.Concatenate(name=name)([branch1, branch3, double, pool])


def _reduction(x, name, filters):
    n3r, n3, nd_r, nd = filters
    for size in x.shape[1:3]:
        if size is not None and size % 2:
            raise ValueError(
                f"BN-Inception's stride-2 block {name} needs an even feature-map size (its "
                f"convolution and pooling branches differ otherwise), got {size}. Use an input "
                "size that is a multiple of 32, e.g. 224."
            )
    branch3 = conv_block(x, n3r, 1, f"{name}_3x3_reduce", batchnorm=True)
    branch3 = conv_block(branch3, n3, 3, f"{name}_3x3", strides=2, padding=1, batchnorm=True)
    double = conv_block(x, nd_r, 1, f"{name}_double_3x3_reduce", batchnorm=True)
    double = conv_block(double, nd, 3, f"{name}_double_3x3_1", batchnorm=True)
    double = conv_block(double, nd, 3, f"{name}_double_3x3_2", strides=2, padding=1, batchnorm=True)
    pool = caffe_pool(x, f"{name}_pool")
    return keras.layers.Concatenate(name=name)([branch3, double, pool])


def bn_inception_split_points():
    """BN-Inception split points; every layer name equals its split-point name."""
    names = ["conv1", "pool1", "conv2_reduce", "conv2", "pool2"] + [b for b, _ in BLOCKS]
    points = {n: n for n in names}
    points["features"] = "inception_5b"
    return points


def build_bn_inception(images, imagenet):
    """BN-Inception from normalised images to `inception_5b` (1024 channels, stride 32).

    Raises `ValueError` for odd feature-map sizes at the stride-2 blocks 3c and 4e.

    References:
        Ioffe & Szegedy, "Batch Normalization: Accelerating Deep Network Training by Reducing
        Internal Covariate Shift", ICML 2015 (Fig. 5).
    """
    del imagenet  # `get` loads converted ImageNet weights after building.
    x = conv_block(
        images, 64, 7, "conv1_7x7_s2", strides=2, padding=3, batchnorm=True, output_name="conv1"
    )
    x = caffe_pool(x, "pool1")
    x = conv_block(x, 64, 1, "conv2_3x3_reduce", batchnorm=True, output_name="conv2_reduce")
    x = conv_block(x, 192, 3, "conv2_3x3", batchnorm=True, output_name="conv2")
    x = caffe_pool(x, "pool2")
    for name, filters in BLOCKS:
        x = _reduction(x, name, filters) if len(filters) == 4 else _inception(x, name, filters)
    return x


SPEC = register_backbone(
    BackboneSpec(
        name="bn_inception",
        build=build_bn_inception,
        normalization={"mode": "custom", "mean": (128.0, 117.0, 104.0), "reverse_channels": True},
        split_points=bn_inception_split_points,
        min_size=32,
        converted_imagenet=True,
        description="BN-Inception (Ioffe & Szegedy 2015), paper block names; common DML "
        "backbone (Proxy-NCA, hierarchical D&C).",
    )
)
