"""ResNet-50 v1.5 (torchvision's): a downsampling block strides its 3x3 conv, not its first 1x1."""

import keras

# Blocks per stage and bottleneck width: Table 1 of He et al. 2016 (50-layer column).
STAGES = ((2, 3, 64), (3, 4, 128), (4, 6, 256), (5, 3, 512))
EXPANSION = 4
# torchvision's BatchNorm2d epsilon (Keras' ResNet50 uses 1.001e-5).
BN_EPSILON = 1e-5


def _conv_bn(x, filters, kernel_size, name, strides=1, relu=True):
    """Bias-free conv with torchvision's symmetric padding `kernel_size // 2`, BatchNorm, ReLU."""
    pad = kernel_size // 2
    if pad:
        x = keras.layers.ZeroPadding2D(pad, name=f"{name}_pad")(x)
    x = keras.layers.Conv2D(
        filters, kernel_size, strides=strides, use_bias=False, name=f"{name}_conv"
    )(x)
    x = keras.layers.BatchNormalization(epsilon=BN_EPSILON, name=f"{name}_bn")(x)
    return keras.layers.Activation("relu", name=f"{name}_relu")(x) if relu else x


def bottleneck_v15(x, width, strides, name, project):
    """One bottleneck (Fig. 5 right of He et al. 2016) with the stride in the 3x3 conv.

    `width` is the channel count of the 1x1 and 3x3 convolutions (the output has 4x); the output
    layer is `f"{name}_out"`; `project` adds the 1x1 projection shortcut.
    """
    shortcut = x
    if project:
        shortcut = _conv_bn(x, EXPANSION * width, 1, f"{name}_0", strides=strides, relu=False)
    x = _conv_bn(x, width, 1, f"{name}_1")
    x = _conv_bn(x, width, 3, f"{name}_2", strides=strides)
    x = _conv_bn(x, EXPANSION * width, 1, f"{name}_3", relu=False)
    x = keras.layers.Add(name=f"{name}_add")([shortcut, x])
    return keras.layers.Activation("relu", name=f"{name}_out")(x)


def build_resnet50_v15(images):
    """ResNet-50 v1.5 from normalised images to `conv5_block3_out` (2048 channels, stride 32).

    References:
        He et al., "Deep Residual Learning for Image Recognition", CVPR 2016 (Table 1);
        torchvision `resnet50` (the "v1.5" stride placement of its `Bottleneck`).
    """
    x = _conv_bn(images, 64, 7, "conv1", strides=2)
    # Zero padding equals torchvision's -inf padding here: the input follows a ReLU.
    x = keras.layers.ZeroPadding2D(1, name="pool1_pad")(x)
    x = keras.layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, blocks, width in STAGES:
        for block in range(1, blocks + 1):
            strides = 2 if block == 1 and stage > 2 else 1
            x = bottleneck_v15(x, width, strides, f"conv{stage}_block{block}", project=block == 1)
    return x
