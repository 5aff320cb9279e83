"""`keras_dml.backbones.get`: build a registered backbone as a functional model on raw pixels."""

import keras

from keras_dml.backbones.batchnorm import (
    DEFAULT_MOMENTUM,
    check_momentum,
    set_batchnorm_momentum,
)
from keras_dml.backbones.batchnorm import freeze_batchnorm as _freeze_batchnorm
from keras_dml.backbones.registry import get_spec
from keras_dml.backbones.weights import load_weights_file
from keras_dml.backbones.weights_resolution import resolve_weights
from keras_dml.layers.image_normalization import ImageNormalization
from keras_dml.utils.suggestions import did_you_mean_keys


def _check_input_shape(spec, input_shape):
    try:
        shape = tuple(None if d is None else int(d) for d in input_shape)
    except (TypeError, ValueError):
        shape = None
    if shape is None or len(shape) != 3:
        raise ValueError(
            "`input_shape` must be (height, width, channels), channels last. "
            f"Received: input_shape={input_shape!r}"
        )
    height, width, channels = shape
    if spec.channels is not None and channels != spec.channels:
        raise ValueError(
            f"Backbone {spec.name!r} takes {spec.channels}-channel (RGB) images. "
            f"Received: input_shape={input_shape!r}"
        )
    if channels is None or channels < 1:
        raise ValueError(f"The channel count must be known. Received: input_shape={input_shape!r}")
    for size in (height, width):
        if size is not None and size < spec.min_size:
            raise ValueError(
                f"Backbone {spec.name!r} needs images of at least {spec.min_size}x"
                f"{spec.min_size} px. Received: input_shape={input_shape!r}"
            )
    return shape


def get(
    name,
    weights=None,
    input_shape=(224, 224, 3),
    freeze_batchnorm=False,
    batchnorm_momentum=DEFAULT_MOMENTUM,
    **kwargs,
):
    """Builds a backbone: raw pixels in [0, 255] -> last 4-D feature map.

    The model is functional and flat: its first layer after the input is
    `keras_dml.layers.ImageNormalization` with the normalisation the backbone's pretrained
    weights expect (`"caffe"` for ResNet-50, bvlc_googlenet's BGR mean 104, 117, 123 for the
    Caffe GoogLeNet, `"tf"` for MobileNetV2 and ConvNet),
    so it always takes raw pixels. There is no pooling and no classifier. The model's name is
    the backbone name, and the layers named by `split_points(name)` mark the stages where
    `cut` can split it (ABE's S / C / G parts).

    Args:
        name: str. One of `list_backbones()`: `"convnet"`, `"vgg_small"`, `"resnet50"`,
            `"googlenet"`, `"mobilenet_v2"`, `"bn_inception"`.
        weights: None (random initialisation), `"imagenet"` or the path of a weights file: a
            `.weights.h5` saved from a backbone built with the same name and options (a file
            from `keras-dml backbones convert` records its variant, which is then built), or
            a Keras 2 `.h5` file such as the `keras.applications` `*_notop.h5` downloads.
            `"imagenet"` is a Keras download for `resnet50` (v1) and `mobilenet_v2`, and the
            converted file `keras_dml.backbones.imagenet_lookup` finds for `googlenet`
            (variants "caffe" and "torchvision"), `resnet50` variant "v1.5" and
            `bn_inception`. A recipe's `weights` object, `{"pretrained": "imagenet",
            "source_file": ..., "source_sha256": ...}` (or `"source_sha1"`), is `"imagenet"`
            for a converted file that must have been converted from that published file
            (`keras_dml.backbones.expected_source`). Defaults to `None`.
        input_shape: tuple `(height, width, channels)`; height/width may be `None` for the
            Keras application backbones. Defaults to `(224, 224, 3)`.
        freeze_batchnorm: bool. Set every BatchNormalization layer to `trainable=False`
            (inference mode, statistics frozen). Defaults to `False`.
        batchnorm_momentum: float in [0, 1). Momentum of the moving statistics of every
            BatchNormalization layer, the `keras.applications` ones included (they use 0.99
            or 0.999). Defaults to `0.9`: with Keras' 0.99 a short run's inference-mode
            embeddings are computed with statistics that have not converged.
        **kwargs: backbone options: `convnet`: `width`, `batchnorm`, `pool_last`;
            `vgg_small`: `width`, `convs_per_block`, `batchnorm`;
            `googlenet`: `batchnorm`, `lrn`, `variant` ("caffe" or "torchvision");
            `resnet50`: `variant` ("v1" or "v1.5"); `mobilenet_v2`: `alpha`.

    Returns:
        Functional `keras.Model` named `name`, input `images` `[N, H, W, C]` float32,
        output `[N, h, w, channels]`.

    Raises:
        ValueError: for an unknown backbone (listing the known ones and close matches), an
            unknown option, an invalid input shape, or a converted weights file made for
            another backbone or variant.
        FileNotFoundError: when `weights` is a path that does not exist.
        WeightsUnavailableError: when ImageNet weights cannot be downloaded or found (the
            message says how to pass or convert a local file instead), or were converted from
            another file than a `weights` object expects.

    Examples:
    >>> backbone = get("convnet", input_shape=(32, 32, 3))
    >>> backbone.output_shape
    (None, 4, 4, 256)
    >>> resnet = get("resnet50", weights="imagenet", freeze_batchnorm=True)  # doctest: +SKIP

    References:
        Szegedy et al., "Going Deeper with Convolutions", CVPR 2015; He et al., "Deep Residual
        Learning for Image Recognition", CVPR 2016; Sandler et al., "MobileNetV2", CVPR 2018;
        Ioffe & Szegedy, "Batch Normalization", ICML 2015.
    """
    spec = get_spec(name)
    unknown = sorted(set(kwargs) - set(spec.options))
    if unknown:
        raise ValueError(
            f"Backbone {name!r} has no option(s) {unknown}."
            f"{did_you_mean_keys(unknown, spec.options)} Its options (with defaults): "
            f"{dict(spec.options) or 'none'}."
        )
    shape = _check_input_shape(spec, input_shape)
    batchnorm_momentum = check_momentum(batchnorm_momentum)
    weights, kwargs = resolve_weights(name, weights, kwargs)

    images = keras.Input(shape=shape, name="images")
    normalization = spec.resolve_normalization(**kwargs)
    normalized = ImageNormalization(**normalization, name="image_normalization")(images)
    features = spec.build(normalized, imagenet=weights == "imagenet", **kwargs)
    model = keras.Model(images, features, name=spec.name)
    set_batchnorm_momentum(model, batchnorm_momentum)
    if weights not in (None, "imagenet"):
        load_weights_file(model, weights)
    if freeze_batchnorm:
        _freeze_batchnorm(model)
    return model
