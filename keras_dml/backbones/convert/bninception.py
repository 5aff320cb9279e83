"""`bninception` state dict (Cadene's pretrainedmodels port) -> keras-dml `bn_inception`.

Layer names are Caffe's on both sides; convolution biases fold into the BatchNorm mean.
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
