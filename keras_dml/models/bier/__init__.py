"""BIER / A-BIER: online gradient boosting over embedding groups, with diversity losses.

Opitz, Waltner, Possegger, Bischof, "Deep Metric Learning with BIER: Boosting Independent
Embeddings Robustly", TPAMI 2020.
"""

from keras_dml.models.bier.boosted_loss import boosted_learner_losses
from keras_dml.models.bier.boosting import (
    PAPER_GROUP_SIZES,
    boosting_group_sizes,
    boosting_weights,
    proportional_group_sizes,
    shrinkage_rates,
)
from keras_dml.models.bier.diversity import (
    ActivationDiversity,
    AdversarialDiversity,
    bias_norm_penalty,
    unit_norm_penalty,
)
from keras_dml.models.bier.method import BIEROptions, build_bier, build_bier_model
from keras_dml.models.bier.model import BIER
from keras_dml.models.bier.pair_losses import cosine_pair_loss, get_loss_form

__all__ = [
    "BIER",
    "BIEROptions",
    "PAPER_GROUP_SIZES",
    "ActivationDiversity",
    "AdversarialDiversity",
    "bias_norm_penalty",
    "boosted_learner_losses",
    "build_bier",
    "build_bier_model",
    "boosting_group_sizes",
    "boosting_weights",
    "cosine_pair_loss",
    "get_loss_form",
    "proportional_group_sizes",
    "shrinkage_rates",
    "unit_norm_penalty",
]
