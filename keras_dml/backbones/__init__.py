"""Backbones: functional models from raw pixels [0, 255] to the last feature map."""

# Importing the backbone modules registers them.
from keras_dml.backbones import (  # noqa: F401
    bn_inception,
    convnet,
    googlenet,
    hub,
    mobilenet_v2,
    resnet50,
    vgg_small,
)
from keras_dml.backbones.batchnorm import freeze_batchnorm, set_batchnorm_momentum
from keras_dml.backbones.build import get
from keras_dml.backbones.cut import cut
from keras_dml.backbones.registry import (
    BackboneSpec,
    list_backbones,
    register_backbone,
    split_points,
)
from keras_dml.backbones.weights import WeightsUnavailableError
from keras_dml.backbones.weights_resolution import check_backbone_weights

__all__ = [
    "BackboneSpec",
    "WeightsUnavailableError",
    "check_backbone_weights",
    "cut",
    "freeze_batchnorm",
    "get",
    "list_backbones",
    "register_backbone",
    "set_batchnorm_momentum",
    "split_points",
]
