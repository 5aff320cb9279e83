"""GoogLeNet (Inception-v1) with the layer names of the paper and of Caffe's `bvlc_googlenet`."""

import keras

from keras_dml.backbones.blocks import BN_EPSILON, caffe_pool, conv_block
from keras_dml.backbones.registry import BackboneSpec, register_backbone
from keras_dml.layers.local_response_normalization import LocalResponseNormalization

VARIANTS = ("caffe", "torchvision")
# BatchNorm epsilon of torchvision's `BasicConv2d`.
TORCHVISION_BN_EPSILON = 1e-3

# (#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj): Table 1 of Szegedy et al. 2015.
INCEPTION_FILTERS = {
    "inception_3a": (64, 96, 128, 16, 32, 32),
    "inception_3b": (128, 128, 192, 32, 96, 64),
    "inception_4a": (192, 96, 208, 16, 48, 64),
    "inception_4b": (160, 112, 224, 24, 64, 64),
    "inception_4c": (128, 128, 256, 24, 64, 64),
    "inception_4d": (112, 144, 288, 32, 64, 64),
    "inception_4e": (256, 160, 320, 32, 128, 128),
    "inception_5a": (256, 160, 320, 32, 128, 128),
    "inception_5b": (384, 192, 384, 48, 128, 128),
}
_STAGES = (
    ("pool2", ("inception_3a", "inception_3b")),
    ("pool3", ("inception_4a", "inception_4b", "inception_4c", "inception_4d", "inception_4e")),
    ("pool4", ("inception_5a", "inception_5b")),
)


def inception_block(x, name, filters, batchnorm=False, five_kernel=5, epsilon=BN_EPSILON):
    """One Inception module (Fig. 2b of Szegedy et al. 2015) whose output layer is `name`.

    `filters` is `(#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj)`; `five_kernel` is the
    "5x5" branch's kernel size (torchvision: 3).
    """
    n1, n3r, n3, n5r, n5, npool = filters
    options = {"batchnorm": batchnorm, "epsilon": epsilon}
    branch1 = conv_block(x, n1, 1, f"{name}_1x1", **options)
    branch3 = conv_block(x, n3r, 1, f"{name}_3x3_reduce", **options)
    branch3 = conv_block(branch3, n3, 3, f"{name}_3x3", **options)
    branch5 = conv_block(x, n5r, 1, f"{name}_5x5_reduce", **options)
    branch5 = conv_block(branch5, n5, five_kernel, f"{name}_5x5", **options)
    pool = keras.layers.MaxPooling2D(3, strides=1, padding="same", name=f"{name}_pool")(x)
    pool = conv_block(pool, npool, 1, f"{name}_pool_proj", **options)
    return keras.layers.Concatenate(axis=-1, name=name)([branch1, branch3, branch5, pool])


def googlenet_split_points(lrn=None, batchnorm=None, variant="caffe"):
    """GoogLeNet split points; every layer name equals its split-point name."""
    del lrn, batchnorm, variant  # The stage outputs keep their names whatever the options.
    names = ["conv1", "pool1", "conv2_reduce", "conv2", "pool2", "inception_3a", "inception_3b"]
    names += ["pool3", "inception_4a", "inception_4b", "inception_4c", "inception_4d"]
    names += ["inception_4e", "pool4", "inception_5a", "inception_5b"]
    points = {n: n for n in names}
    points["features"] = "inception_5b"
    return points


# bvlc_googlenet's `mean_value` (train_val / deploy prototxt: B 104, G 117, R 123), in the RGB
# order of ImageNormalization's input. Not the VGG/ResNet means (103.939, 116.779, 123.68) of
# mode "caffe": its ImageNet weights, and ABE / BIER that fine-tune them, expect these, and
# folding the difference into conv1 is not exact at its zero-padded borders.
BVLC_GOOGLENET_MEAN_RGB = (123.0, 117.0, 104.0)


def googlenet_normalization(variant="caffe", **options):
    """`ImageNormalization` arguments of a variant: bvlc_googlenet's BGR mean, or [-1, 1]."""
    del options  # Only the variant changes the input normalisation.
    if variant == "torchvision":
        return {"mode": "tf"}
    return {"mode": "custom", "mean": BVLC_GOOGLENET_MEAN_RGB, "reverse_channels": True}


def _check_variant(variant, batchnorm, lrn):
    if variant not in VARIANTS:
        raise ValueError(
            f"Unknown GoogLeNet variant {variant!r}; expected one of {list(VARIANTS)}."
        )
    if variant == "torchvision" and (batchnorm is False or lrn):
        raise ValueError(
            "GoogLeNet variant 'torchvision' always has BatchNorm and no LRN; drop "
            f"`batchnorm`/`lrn`. Received: batchnorm={batchnorm}, lrn={lrn}"
        )


def build_googlenet(images, imagenet, batchnorm=None, lrn=None, variant="caffe"):
    """Inception-v1 from normalised images to `inception_5b` (1024 channels, stride 32).

    `batchnorm` defaults to off for `"caffe"`, on for `"torchvision"`; `lrn` (Caffe's LRN after
    pool1 and conv2) to on unless `batchnorm`. `imagenet` is unused: `get` loads converted weights.

    References:
        Szegedy et al., "Going Deeper with Convolutions", CVPR 2015 (Table 1, Fig. 3).
    """
    del imagenet  # `get` loads converted ImageNet weights after building.
    _check_variant(variant, batchnorm, lrn)
    torchvision = variant == "torchvision"
    batchnorm = torchvision if batchnorm is None else bool(batchnorm)
    epsilon = TORCHVISION_BN_EPSILON if torchvision else BN_EPSILON
    options = {"batchnorm": batchnorm, "epsilon": epsilon}
    use_lrn = (not batchnorm) if lrn is None else bool(lrn)
    x = conv_block(
        images,
        64,
        7,
        "conv1_7x7_s2",
        strides=2,
        padding=3,
        output_name="conv1",
        **options,
    )
    x = caffe_pool(x, "pool1_3x3_s2" if use_lrn else "pool1")
    if use_lrn:
        x = LocalResponseNormalization(name="pool1")(x)
    x = conv_block(x, 64, 1, "conv2_3x3_reduce", output_name="conv2_reduce", **options)
    x = conv_block(x, 192, 3, "conv2_3x3", output_name=None if use_lrn else "conv2", **options)
    if use_lrn:
        x = LocalResponseNormalization(name="conv2")(x)
    for pool_name, blocks in _STAGES:
        # torchvision's pool4 is 2x2 / 2 (ceil mode), the others 3x3 / 2 as in Caffe.
        pool_size = 2 if torchvision and pool_name == "pool4" else 3
        x = caffe_pool(x, pool_name, pool_size=pool_size)
        for block in blocks:
            filters = INCEPTION_FILTERS[block]
            x = inception_block(x, block, filters, five_kernel=3 if torchvision else 5, **options)
    return x


SPEC = register_backbone(
    BackboneSpec(
        name="googlenet",
        build=build_googlenet,
        normalization=googlenet_normalization,
        split_points=googlenet_split_points,
        options={"batchnorm": None, "lrn": None, "variant": "caffe"},
        converted_imagenet=True,
        min_size=32,
        description="GoogLeNet / Inception-v1 (Szegedy et al. 2015), Caffe layer names; "
        "ABE and BIER backbone.",
    )
)
