"""Caffe `bvlc_googlenet.caffemodel` -> keras-dml `googlenet` variant "caffe".

Blob 0 of layer `L` is `L.weight`, blob 1 `L.bias`; kernels keep Caffe's BGR input order, since
`ImageNormalization` reverses the channels.
"""

import os

from keras_dml.backbones.convert.caffemodel import read_caffemodel
from keras_dml.backbones.convert.mapping import ConvBN
from keras_dml.backbones.convert.state_dict import load_state_dict
from keras_dml.backbones.googlenet import INCEPTION_FILTERS

DESCRIPTION = "Caffe bvlc_googlenet"
IGNORED_PREFIXES = ("loss1/", "loss2/", "loss3/")
_STEM = ("conv1_7x7_s2", "conv2_3x3_reduce", "conv2_3x3")
_BRANCHES = ("1x1", "3x3_reduce", "3x3", "5x5_reduce", "5x5", "pool_proj")
_BLOB_KEYS = ("weight", "bias")


def caffe_name(keras_name):
    """Caffe layer name of a Keras GoogLeNet convolution.

    Examples:
    >>> caffe_name("inception_4e_5x5_reduce")
    'inception_4e/5x5_reduce'
    """
    if keras_name.startswith("inception_"):
        return f"{keras_name[:12]}/{keras_name[13:]}"
    stem, _, rest = keras_name.partition("_")
    return f"{stem}/{rest}"


def _blob_key(layer, index):
    return f"{layer}.{_BLOB_KEYS[index] if index < len(_BLOB_KEYS) else index}"


def _as_vector(blob):
    """A bias blob as a vector: legacy files store it as `[1, 1, 1, out]`."""
    return blob.reshape(-1) if blob.ndim > 1 and set(blob.shape[:-1]) == {1} else blob


def state_dict_from_layers(layers):
    """`{layer: [blobs]}` (from `read_caffemodel`) -> `{"layer.weight": .., "layer.bias": ..}`."""
    state = {}
    for layer, blobs in layers.items():
        for index, blob in enumerate(blobs):
            state[_blob_key(layer, index)] = _as_vector(blob) if index == 1 else blob
    return state


def load_weights(source, description=DESCRIPTION):
    """The state dict of a `.caffemodel` file, or of a dict already in `.weight`/`.bias` form."""
    if isinstance(source, (str, os.PathLike)):
        return state_dict_from_layers(read_caffemodel(source))
    return load_state_dict(source, description)


def plan(model):
    """The `ConvBN` list of the Caffe GoogLeNet: every convolution with its bias, no BatchNorm."""
    del model
    names = list(_STEM)
    for block in INCEPTION_FILTERS:
        names += [f"{block}_{branch}" for branch in _BRANCHES]
    return [ConvBN(name, caffe_name(name), torch_bias=True) for name in names]
