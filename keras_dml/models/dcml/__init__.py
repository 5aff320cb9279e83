"""DCML: Deep Compositional Metric Learning.

Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021. K learners produce
sub-embeddings; M learnable compositors (`keras_dml.layers.Compositor`) re-weight them into
composites that carry the subtask losses, while a discriminative loss trains the concatenation.
"""

from keras_dml.layers.compositor import Compositor, straight_through_sign
from keras_dml.models.dcml.method import build_dcml
from keras_dml.models.dcml.model import DCML
from keras_dml.models.dcml.objective import compose, self_reinforced_loss

__all__ = [
    "DCML",
    "Compositor",
    "build_dcml",
    "compose",
    "self_reinforced_loss",
    "straight_through_sign",
]
