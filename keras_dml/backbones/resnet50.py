"""ResNet-50, flat graph with addressable stage outputs: Keras' v1 or torchvision's v1.5."""

import keras

from keras_dml.backbones.registry import BackboneSpec, register_backbone
from keras_dml.backbones.resnet50_v15 import build_resnet50_v15
from keras_dml.backbones.weights import keras_download_errors

VARIANTS = ("v1", "v1.5")

_FILE = "resnet50_weights_tf_dim_ordering_tf_kernels_notop.h5"
_URL = f"https://storage.googleapis.com/tensorflow/keras-applications/resnet/{_FILE}"

SPLIT_POINTS = {
    "conv1": "pool1_pool",
    "conv2": "conv2_block3_out",
    "conv3": "conv3_block4_out",
    "conv4": "conv4_block6_out",
    "conv5": "conv5_block3_out",
    "features": "conv5_block3_out",
}


def resnet50_normalization(variant="v1"):
    """`ImageNormalization` arguments: Caffe BGR mean for Keras' v1, torchvision's for v1.5."""
    return {"mode": "torch"} if variant == "v1.5" else {"mode": "caffe"}


def build_resnet50(images, imagenet, variant="v1"):
    """ResNet-50 without top on the normalised input tensor: Keras' v1 or torchvision's v1.5.

    `variant="v1"` is `keras.applications.ResNet50` (stride in the first 1x1 convolution of a
    downsampling block, ImageNet weights downloaded by Keras); `variant="v1.5"` is
    torchvision's `resnet50` (stride in the 3x3 convolution; `keras_dml.backbones.resnet50_v15`)
    whose ImageNet weights are converted with `keras-dml backbones convert`.

    Passing `input_tensor` keeps every ResNet layer in the same (flat) functional graph as the
    normalisation layer, so stage outputs are split points: `conv1` (`pool1_pool`, stride 4,
    64 ch), `conv2` (`conv2_block3_out`, stride 4, 256 ch), `conv3` (stride 8, 512),
    `conv4` (stride 16, 1024), `conv5` / `features` (`conv5_block3_out`, stride 32, 2048).

    Args:
        images: symbolic tensor, normalised as `resnet50_normalization(variant)` says.
        imagenet: bool. v1: download (or take from the Keras cache) the ImageNet weights.
            Unused for v1.5 (`get` loads the converted weights after building).
        variant: `"v1"` or `"v1.5"`. Defaults to `"v1"`.

    Returns:
        Symbolic tensor `[N, H/32, W/32, 2048]`.

    Raises:
        ValueError: for an unknown variant.
        WeightsUnavailableError: when the ImageNet weights cannot be downloaded.

    References:
        He et al., "Deep Residual Learning for Image Recognition", CVPR 2016 (Table 1).
    """
    if variant not in VARIANTS:
        raise ValueError(
            f"Unknown ResNet-50 variant {variant!r}; expected one of {list(VARIANTS)}."
        )
    if variant == "v1.5":
        return build_resnet50_v15(images)
    with keras_download_errors("resnet50", _FILE, _URL):
        model = keras.applications.ResNet50(
            include_top=False,
            weights="imagenet" if imagenet else None,
            input_tensor=images,
            pooling=None,
        )
    return model.output


SPEC = register_backbone(
    BackboneSpec(
        name="resnet50",
        build=build_resnet50,
        normalization=resnet50_normalization,
        split_points=SPLIT_POINTS,
        options={"variant": "v1"},
        converted_imagenet=lambda variant: variant == "v1.5",
        min_size=32,
        description="ResNet-50 (He et al. 2016): keras.applications v1 or torchvision v1.5; "
        "D&C and DCML backbone.",
    )
)
