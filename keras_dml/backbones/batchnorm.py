"""BatchNormalization settings of a built model: freezing, moving-average momentum."""

import keras

# Momentum of the moving statistics in every backbone `keras_dml.backbones.get` builds. After n
# steps the moving statistics still hold momentum**n of their initial values (mean 0, variance
# 1): with Keras' default 0.99 that is 37% after 100 steps, with 0.9 it is 0.003%.
DEFAULT_MOMENTUM = 0.9


def _batchnorm_layers(model):
    """Every `keras.layers.BatchNormalization` in `model`, nested models included."""
    found = []
    stack = [model]
    seen = set()
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if isinstance(layer, keras.layers.BatchNormalization):
            found.append(layer)
        stack.extend(getattr(layer, "layers", []) or [])
    return found


def check_momentum(momentum):
    """Returns `momentum` as a float after checking it lies in [0, 1)."""
    if isinstance(momentum, bool) or not isinstance(momentum, int | float) or not 0 <= momentum < 1:
        raise ValueError(
            "`batchnorm_momentum` must be a float in [0, 1) (0.9 suits short runs; Keras' "
            f"default is 0.99). Received: batchnorm_momentum={momentum!r}"
        )
    return float(momentum)


def set_batchnorm_momentum(model, momentum=DEFAULT_MOMENTUM):
    """Sets the moving-average momentum of every BatchNormalization layer of a model.

    Args:
        model: `keras.Model` or layer.
        momentum: float in [0, 1). Weight of the old moving statistic. Defaults to `0.9`.

    Returns:
        int. The number of layers changed.

    Raises:
        ValueError: momentum outside [0, 1).

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> set_batchnorm_momentum(backbone, 0.95)
    4

    References:
        Ioffe & Szegedy, "Batch Normalization", ICML 2015.
    """
    momentum = check_momentum(momentum)
    layers = _batchnorm_layers(model)
    for layer in layers:
        layer.momentum = momentum
    return len(layers)


def freeze_batchnorm(model):
    """Freezes every BatchNormalization layer of a model (nested models included).

    Args:
        model: `keras.Model` or layer.

    Returns:
        int. The number of layers frozen.

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> freeze_batchnorm(backbone)
    4

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning",
        CVPR 2019 (reference code: BatchNorm statistics frozen).
    """
    layers = _batchnorm_layers(model)
    for layer in layers:
        layer.trainable = False
    return len(layers)
