"""Registered, serializable custom layers of keras-dml."""

from keras_dml.backbones.local_response_normalization import LocalResponseNormalization
from keras_dml.layers.gradient_reversal import GradientReversal
from keras_dml.layers.image_normalization import ImageNormalization

__all__ = ["GradientReversal", "ImageNormalization", "LocalResponseNormalization"]
