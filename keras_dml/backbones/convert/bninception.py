"""`bninception` state dict (Cadene's pretrainedmodels port) -> keras-dml `bn_inception`.

The port names every layer as the Caffe model does, and so does the Keras backbone:
convolution `inception_3a_1x1` (with a bias), BatchNorm `inception_3a_1x1_bn`. The Keras
convolutions have no bias; it is folded into the BatchNorm mean. The classifier
`last_linear.*` is not part of the backbone. The port takes BGR pixels in [0, 255] minus the
mean (104, 117, 128), which the Keras backbone's `ImageNormalization` computes from RGB.
"""

import keras

from keras_dml.backbones.convert.mapping import ConvBN

DESCRIPTION = "bninception (pretrainedmodels)"
IGNORED_PREFIXES = ("last_linear.",)


def plan(model):
    """The `ConvBN` list of BN-Inception: every Keras Conv2D `n` <- `n` and BatchNorm `n_bn`."""
    return [
        ConvBN(layer.name, layer.name, f"{layer.name}_bn", f"{layer.name}_bn", torch_bias=True)
        for layer in model.layers
        if isinstance(layer, keras.layers.Conv2D)
    ]
