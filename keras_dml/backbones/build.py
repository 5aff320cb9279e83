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

    Args:
        name: str. One of `list_backbones()`.
        weights: None (random), `"imagenet"`, a weights file path, or a recipe's `weights`
            object. Defaults to `None`.
        input_shape: tuple `(height, width, channels)`. Defaults to `(224, 224, 3)`.
        freeze_batchnorm: bool. Freeze every BatchNormalization layer. Defaults to `False`.
        batchnorm_momentum: float in [0, 1). Momentum of every BatchNormalization layer's moving
            statistics. Defaults to `0.9`.
        **kwargs: the backbone's build options, e.g. `variant` (its `BackboneSpec.options`).

    Returns:
        Functional `keras.Model` named `name`, `[N, H, W, C]` images -> `[N, h, w, channels]`.

    Raises:
        ValueError: an unknown backbone or option, a bad input shape, or a weights file
            converted for another backbone or variant.
        FileNotFoundError: `weights` is a path that does not exist.
        WeightsUnavailableError: ImageNet weights cannot be downloaded or found, or come from
            another file than a `weights` object expects.

    Examples:
    >>> get("convnet", input_shape=(32, 32, 3)).output_shape
    (None, 4, 4, 256)

    References:
        Szegedy et al., "Going Deeper with Convolutions", CVPR 2015; He et al., "Deep Residual
        Learning for Image Recognition", CVPR 2016; Sandler et al., "MobileNetV2", CVPR 2018.
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
