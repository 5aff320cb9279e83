"""Converting published ImageNet weights (torchvision, Caffe, `bninception`) into backbones."""

from keras_dml.backbones.conversions import BACKBONES, CONVERSIONS, SOURCES
from keras_dml.backbones.convert.convert import convert_state_dict

__all__ = ["BACKBONES", "CONVERSIONS", "SOURCES", "convert_state_dict"]
