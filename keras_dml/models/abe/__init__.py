"""ABE: Attention-based Ensemble for deep metric learning, and its M-heads baseline.

Kim, Goyal, Chawla, Lee, Kwon, "Attention-based Ensemble for Deep Metric Learning", ECCV 2018.
The attention modules live in `keras_dml.layers.AttentionBranch`; plots and Grad-CAM in
`keras_dml.visualization.attention` and `keras_dml.visualization.gradcam`.
"""

from keras_dml.models.abe.branching import DEFAULT_BRANCHES, copy_segment, resolve_branches
from keras_dml.models.abe.losses import abe_contrastive_loss, divergence_loss
from keras_dml.models.abe.method import build_abe, build_mheads
from keras_dml.models.abe.mheads import MHEADS_BRANCH_POINTS, MHeads
from keras_dml.models.abe.model import ABE

__all__ = [
    "ABE",
    "DEFAULT_BRANCHES",
    "MHEADS_BRANCH_POINTS",
    "MHeads",
    "abe_contrastive_loss",
    "build_abe",
    "build_mheads",
    "copy_segment",
    "divergence_loss",
    "resolve_branches",
]
