"""MobileNetV2 from `keras.applications`, flat graph with addressable block outputs."""

import keras

from keras_dml.backbones.registry import BackboneSpec, register_backbone
from keras_dml.backbones.weights import keras_download_errors

ALPHAS = (0.35, 0.5, 0.75, 1.0, 1.3, 1.4)
IMAGENET_SIZES = (96, 128, 160, 192, 224)


def mobilenet_v2_split_points(alpha=1.0):
    """MobileNetV2 split points (Keras layer names) at strides 4, 8, 16, 32 and the final map."""
    del alpha
    return {
        "block_2": "block_2_add",
        "block_5": "block_5_add",
        "block_12": "block_12_add",
        "block_16": "block_16_project_BN",
        "features": "out_relu",
    }


def build_mobilenet_v2(images, imagenet, alpha=1.0):
    """`keras.applications.MobileNetV2` without top, called on the normalised input tensor.

    Raises `ValueError` for an `alpha` without ImageNet weights when they are asked.

    References:
        Sandler et al., "MobileNetV2: Inverted Residuals and Linear Bottlenecks", CVPR 2018.
    """
    if not isinstance(alpha, (int, float)) or alpha <= 0:
        raise ValueError(f"`alpha` must be a positive number. Received: alpha={alpha!r}")
    rows, cols = images.shape[1], images.shape[2]
    if imagenet and float(alpha) not in ALPHAS:
        raise ValueError(
            f"Keras has MobileNetV2 ImageNet weights for alpha in {ALPHAS} only. "
            f"Received: alpha={alpha}"
        )
    # Keras has one weights file per input size; sizes without one get the 224 px weights
    # (Keras warns). `input_shape` must be passed for Keras to see the size of `input_tensor`.
    matched = rows == cols and rows in IMAGENET_SIZES
    input_shape = tuple(images.shape[1:]) if matched else None
    file_name = (
        "mobilenet_v2_weights_tf_dim_ordering_tf_kernels_"
        f"{float(alpha)}_{rows if matched else 224}_no_top.h5"
    )
    url = f"https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/{file_name}"
    with keras_download_errors("mobilenet_v2", file_name, url):
        model = keras.applications.MobileNetV2(
            include_top=False,
            weights="imagenet" if imagenet else None,
            input_tensor=images,
            input_shape=input_shape,
            alpha=alpha,
            pooling=None,
        )
    return model.output


SPEC = register_backbone(
    BackboneSpec(
        name="mobilenet_v2",
        build=build_mobilenet_v2,
        normalization={"mode": "tf"},
        split_points=mobilenet_v2_split_points,
        options={"alpha": 1.0},
        min_size=32,
        description="MobileNetV2 (Sandler et al. 2018) from keras.applications; light backbone.",
    )
)
