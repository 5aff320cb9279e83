"""torchvision `googlenet` state dict -> keras-dml `googlenet` variant "torchvision"."""

from keras_dml.backbones.convert.mapping import ConvBN
from keras_dml.backbones.googlenet import INCEPTION_FILTERS

DESCRIPTION = "torchvision googlenet"
IGNORED_PREFIXES = ("aux1.", "aux2.", "fc.")
_STEM = (("conv1_7x7_s2", "conv1"), ("conv2_3x3_reduce", "conv2"), ("conv2_3x3", "conv3"))
# Keras branch suffix -> torchvision module inside an Inception block.
_BRANCHES = (
    ("1x1", "branch1"),
    ("3x3_reduce", "branch2.0"),
    ("3x3", "branch2.1"),
    ("5x5_reduce", "branch3.0"),
    ("5x5", "branch3.1"),
    ("pool_proj", "branch4.1"),
)


def _basic_conv(keras_name, torch_name):
    return ConvBN(keras_name, f"{torch_name}.conv", f"{keras_name}_bn", f"{torch_name}.bn")


def plan(model):
    """The `ConvBN` list of torchvision's GoogLeNet (`model` is unused: names are fixed)."""
    del model
    entries = [_basic_conv(keras, torch) for keras, torch in _STEM]
    for block in INCEPTION_FILTERS:  # "inception_3a" -> torchvision "inception3a"
        torch_block = block.replace("_", "")
        for suffix, branch in _BRANCHES:
            entries.append(_basic_conv(f"{block}_{suffix}", f"{torch_block}.{branch}"))
    return entries
