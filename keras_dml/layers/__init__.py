"""Registered, serializable custom layers of keras-dml."""

from keras_dml.layers.attention_branch import AttentionBranch
from keras_dml.layers.compositor import Compositor, straight_through_sign
from keras_dml.layers.gradient_reversal import GradientReversal
from keras_dml.layers.image_normalization import ImageNormalization
from keras_dml.layers.local_response_normalization import LocalResponseNormalization
from keras_dml.layers.soft_mask import SoftMask

__all__ = [
    "AttentionBranch",
    "Compositor",
    "GradientReversal",
    "ImageNormalization",
    "LocalResponseNormalization",
    "SoftMask",
    "straight_through_sign",
]
