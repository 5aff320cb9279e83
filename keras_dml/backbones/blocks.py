"""Building blocks shared by the hand-written backbones (ConvNet, GoogLeNet, BN-Inception).

Functional helpers: they take a symbolic tensor and return one, naming every layer so that
weight conversion scripts and split points can address it.
"""

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
    """Conv2D (+ BatchNorm) + ReLU.

    Layers are named `{name}` (conv), `{name}_bn` and `{name}_relu`; `output_name` renames the
    ReLU so a block output carries a paper name (GoogLeNet `conv2`).

    Args:
        x: symbolic tensor `[N, H, W, C]`.
        filters: int. Output channels.
        kernel_size: int. Square kernel size.
        name: str. Base layer name.
        strides: int. Defaults to `1`.
        padding: `"same"`, `"valid"` or an int: explicit symmetric zero padding followed by a
            valid convolution, as Caffe's `pad` (e.g. GoogLeNet's 7x7 stride-2 `conv1`, pad 3).
            Defaults to `"same"`.
        batchnorm: bool. Insert BatchNormalization between conv and ReLU (the conv then has no
            bias). Defaults to `False`.
        output_name: str. Name of the ReLU layer. Defaults to `f"{name}_relu"`.
        epsilon: float. BatchNorm epsilon; must equal the source model's for exact weight
            conversion (torchvision's GoogLeNet uses 1e-3). Defaults to `1e-5`.

    Returns:
        Symbolic tensor.
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
    """Pooling with Caffe's output size `ceil((H - k) / s) + 1` (no padding).

    Keras `padding="same"` gives `ceil(H / s)`, which differs from Caffe for odd sizes; to match
    Caffe exactly the input is zero padded at the bottom/right by the amount Caffe's ceil mode
    implies, followed by a valid pooling. Zero padding equals Caffe's clipped window for max
    pooling because every pooled tensor here follows a ReLU (non-negative). Unknown spatial
    sizes fall back to `padding="same"`.

    Args:
        x: symbolic tensor `[N, H, W, C]`, non-negative for `kind="max"`.
        name: str. Name of the pooling layer (the padding layer gets `f"{name}_pad"`).
        pool_size: int. Defaults to `3`.
        strides: int. Defaults to `2`.
        kind: `"max"` or `"avg"`. Defaults to `"max"`.

    Returns:
        Symbolic tensor.
    """
    pool_cls = keras.layers.MaxPooling2D if kind == "max" else keras.layers.AveragePooling2D
    height, width = x.shape[1], x.shape[2]
    if height is None or width is None or kind != "max":
        return pool_cls(pool_size, strides=strides, padding="same", name=name)(x)

    def extra(size):
        out = -(-max(size - pool_size, 0) // strides) + 1
        return max((out - 1) * strides + pool_size - size, 0)

    pad_h, pad_w = extra(height), extra(width)
    if pad_h or pad_w:
        x = keras.layers.ZeroPadding2D(((0, pad_h), (0, pad_w)), name=f"{name}_pad")(x)
    return pool_cls(pool_size, strides=strides, padding="valid", name=name)(x)
