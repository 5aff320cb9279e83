"""Building blocks of the hand-written backbones, naming every layer for conversion and cuts."""

import keras

# Keras' BatchNormalization defaults (momentum 0.99, epsilon 1e-3) differ from the Caffe /
# PyTorch models these backbones reproduce; epsilon 1e-5 keeps converted weights exact.
BN_EPSILON = 1e-5
BN_MOMENTUM = 0.9


def conv_block(
    x,
    filters,
    kernel_size,
    name,
    strides=1,
    padding="same",
    batchnorm=False,
    output_name=None,
    epsilon=BN_EPSILON,
):
    """Conv2D (+ BatchNorm) + ReLU, named `{name}`, `{name}_bn` and `output_name` or `{name}_relu`.

    `padding` may be an int: Caffe's symmetric zero `pad`, then a valid convolution. `epsilon`
    must be the source model's BatchNorm epsilon for exact conversion.
    """
    if isinstance(padding, int):
        if padding > 0:
            x = keras.layers.ZeroPadding2D(padding, name=f"{name}_pad")(x)
        padding = "valid"
    x = keras.layers.Conv2D(
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        use_bias=not batchnorm,
        name=name,
    )(x)
    if batchnorm:
        x = keras.layers.BatchNormalization(
            epsilon=epsilon, momentum=BN_MOMENTUM, name=f"{name}_bn"
        )(x)
    return keras.layers.ReLU(name=output_name or f"{name}_relu")(x)


def caffe_pool(x, name, pool_size=3, strides=2, kind="max"):
    """Pooling with Caffe's output size `ceil((H - k) / s) + 1`; max pooling wants `x >= 0`."""
    pool_cls = keras.layers.MaxPooling2D if kind == "max" else keras.layers.AveragePooling2D
    height, width = x.shape[1], x.shape[2]
    if height is None or width is None or kind != "max":
        return pool_cls(pool_size, strides=strides, padding="same", name=name)(x)

    def extra(size):
        out = -(-max(size - pool_size, 0) // strides) + 1
        return max((out - 1) * strides + pool_size - size, 0)

    pad_h, pad_w = extra(height), extra(width)
    # Zeros equal Caffe's clipped window for max pooling: every pooled tensor follows a ReLU.
    if pad_h or pad_w:
        x = keras.layers.ZeroPadding2D(((0, pad_h), (0, pad_w)), name=f"{name}_pad")(x)
    return pool_cls(pool_size, strides=strides, padding="valid", name=name)(x)
