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
    """ResNet-50 without top on the normalised input: Keras' v1 or torchvision's v1.5 (`variant`).

    `imagenet` downloads v1's ImageNet weights (v1.5's are converted, loaded by `get`).

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
