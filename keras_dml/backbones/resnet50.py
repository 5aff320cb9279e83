"""ResNet-50 from `keras.applications`, flat graph with addressable stage outputs."""

import keras

from keras_dml.backbones.registry import BackboneSpec, register_backbone
from keras_dml.backbones.weights import keras_download_errors

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


def build_resnet50(images, imagenet):
    """`keras.applications.ResNet50` without top, called on the normalised input tensor.

    Passing `input_tensor` keeps every ResNet layer in the same (flat) functional graph as the
    normalisation layer, so stage outputs are split points: `conv1` (`pool1_pool`, stride 4,
    64 ch), `conv2` (`conv2_block3_out`, stride 4, 256 ch), `conv3` (stride 8, 512),
    `conv4` (stride 16, 1024), `conv5` / `features` (`conv5_block3_out`, stride 32, 2048).

    Args:
        images: symbolic tensor, normalised with the Caffe mean (BGR).
        imagenet: bool. Download (or take from the Keras cache) the ImageNet weights.

    Returns:
        Symbolic tensor `[N, H/32, W/32, 2048]`.

    Raises:
        WeightsUnavailableError: when the ImageNet weights cannot be downloaded.

    References:
        He et al., "Deep Residual Learning for Image Recognition", CVPR 2016 (Table 1).
    """
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
        normalization={"mode": "caffe"},
        split_points=SPLIT_POINTS,
        min_size=32,
        description="ResNet-50 (He et al. 2016) from keras.applications; D&C and DCML backbone.",
    )
)
