"""Converting published PyTorch ImageNet weights into keras-dml backbones.

`convert_state_dict(backbone, source, state_dict, output)` (also `keras-dml backbones
convert`) supports GoogLeNet and ResNet-50 v1.5 from torchvision, the original Caffe GoogLeNet
from its `.caffemodel` (read by `caffemodel`, without Caffe) and BN-Inception from the
`bninception` port; one module per source architecture holds its layer plan, `mapping` the
shared checks and tensor layouts.
"""

from keras_dml.backbones.conversions import BACKBONES, CONVERSIONS, SOURCES
from keras_dml.backbones.convert.convert import convert_state_dict

__all__ = ["BACKBONES", "CONVERSIONS", "SOURCES", "convert_state_dict"]
