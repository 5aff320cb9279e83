"""GoogLeNet (Inception-v1), layer names of the paper and of the Caffe `bvlc_googlenet` model."""

import keras

from keras_dml.backbones.blocks import caffe_pool, conv_block
from keras_dml.backbones.local_response_normalization import LocalResponseNormalization
from keras_dml.backbones.registry import BackboneSpec, register_backbone

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


def inception_block(x, name, filters, batchnorm=False):
    """One Inception module (Fig. 2b of Szegedy et al. 2015) whose output layer is `name`.

    Four branches, concatenated on channels by a `Concatenate` layer named `name`:
    1x1; 1x1 reduce -> 3x3; 1x1 reduce -> 5x5; 3x3 max pool (stride 1) -> 1x1 projection.
    Inner layers carry Caffe's names with `/` replaced by `_` (`inception_3a_3x3_reduce`).

    Args:
        x: symbolic tensor `[N, H, W, C]`.
        name: str. Block name, e.g. `"inception_3a"`.
        filters: tuple of 6 ints `(#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj)`.
        batchnorm: bool. BatchNorm after every convolution. Defaults to `False`.

    Returns:
        Symbolic tensor with `#1x1 + #3x3 + #5x5 + pool proj` channels.
    """
    n1, n3r, n3, n5r, n5, npool = filters
    branch1 = conv_block(x, n1, 1, f"{name}_1x1", batchnorm=batchnorm)
    branch3 = conv_block(x, n3r, 1, f"{name}_3x3_reduce", batchnorm=batchnorm)
    branch3 = conv_block(branch3, n3, 3, f"{name}_3x3", batchnorm=batchnorm)
    branch5 = conv_block(x, n5r, 1, f"{name}_5x5_reduce", batchnorm=batchnorm)
    branch5 = conv_block(branch5, n5, 5, f"{name}_5x5", batchnorm=batchnorm)
    pool = keras.layers.MaxPooling2D(3, strides=1, padding="same", name=f"{name}_pool")(x)
    pool = conv_block(pool, npool, 1, f"{name}_pool_proj", batchnorm=batchnorm)
    return keras.layers.Concatenate(axis=-1, name=name)([branch1, branch3, branch5, pool])


def googlenet_split_points(lrn=None, batchnorm=False):
    """GoogLeNet split points; every layer name equals its split-point name."""
    del lrn, batchnorm  # The stage outputs keep their names whatever the options.
    names = ["conv1", "pool1", "conv2_reduce", "conv2", "pool2", "inception_3a", "inception_3b"]
    names += ["pool3", "inception_4a", "inception_4b", "inception_4c", "inception_4d"]
    names += ["inception_4e", "pool4", "inception_5a", "inception_5b"]
    points = {n: n for n in names}
    points["features"] = "inception_5b"
    return points


def build_googlenet(images, imagenet, batchnorm=False, lrn=None):
    """Inception-v1 from normalised images to `inception_5b` (1024 channels, stride 32).

    Stem as the Caffe model: conv1 7x7/2 (pad 3) -> pool1 3x3/2 (-> LRN) -> conv2_reduce 1x1 ->
    conv2 3x3 (-> LRN) -> pool2 3x3/2; then inception 3a, 3b, pool3, 4a..4e, pool4, 5a, 5b.
    Pooling uses Caffe's ceil-mode output sizes. The final average pooling, dropout and
    classifier are not part of the backbone, nor the auxiliary classifiers.

    Layer names: stage outputs are named exactly `conv1`, `pool1`, `conv2_reduce`, `conv2`,
    `pool2`, `inception_3a` .. `inception_5b`, `pool3`, `pool4` (when LRN follows pool1/conv2
    the LRN layer carries the stage name and the pooling/ReLU is `pool1_3x3_s2` /
    `conv2_3x3_relu`); convolutions carry Caffe's names (`conv1_7x7_s2`, `inception_4e_5x5`).

    Args:
        images: symbolic tensor, normalised with the Caffe mean (BGR).
        imagenet: bool. Whether ImageNet weights were requested.
        batchnorm: bool. BatchNorm after every convolution (a common modern variant). Defaults
            to `False`, the original network that ABE and BIER fine-tune.
        lrn: bool or None. Caffe's local response normalisation after pool1 and conv2.
            Defaults to `None`: on for the original network, off with `batchnorm=True`.

    Returns:
        Symbolic tensor `[N, H/32, W/32, 1024]`.

    Raises:
        ValueError: when `imagenet` is true: Keras hosts no GoogLeNet weights.

    References:
        Szegedy et al., "Going Deeper with Convolutions", CVPR 2015 (Table 1, Fig. 3).
    """
    if imagenet:
        raise ValueError(
            "keras.applications provides no ImageNet weights for GoogLeNet (Inception-v1), so "
            "weights='imagenet' cannot be downloaded for backbone 'googlenet'. Convert the Caffe "
            "`bvlc_googlenet` weights (or a PyTorch port) into a Keras weights file for "
            "`keras_dml.backbones.get('googlenet')` (layer names follow Caffe with '/' -> '_') "
            "and pass its path: get('googlenet', weights='/path/googlenet.weights.h5')."
        )
    use_lrn = (not batchnorm) if lrn is None else bool(lrn)
    x = conv_block(
        images,
        64,
        7,
        "conv1_7x7_s2",
        strides=2,
        padding=3,
        batchnorm=batchnorm,
        output_name="conv1",
    )
    x = caffe_pool(x, "pool1_3x3_s2" if use_lrn else "pool1")
    if use_lrn:
        x = LocalResponseNormalization(name="pool1")(x)
    x = conv_block(x, 64, 1, "conv2_3x3_reduce", batchnorm=batchnorm, output_name="conv2_reduce")
    x = conv_block(
        x, 192, 3, "conv2_3x3", batchnorm=batchnorm, output_name=None if use_lrn else "conv2"
    )
    if use_lrn:
        x = LocalResponseNormalization(name="conv2")(x)
    for pool_name, blocks in _STAGES:
        x = caffe_pool(x, pool_name)
        for block in blocks:
            x = inception_block(x, block, INCEPTION_FILTERS[block], batchnorm=batchnorm)
    return x


SPEC = register_backbone(
    BackboneSpec(
        name="googlenet",
        build=build_googlenet,
        normalization={"mode": "caffe"},
        split_points=googlenet_split_points,
        options={"batchnorm": False, "lrn": None},
        min_size=32,
        description="GoogLeNet / Inception-v1 (Szegedy et al. 2015), Caffe layer names; "
        "ABE and BIER backbone.",
    )
)
