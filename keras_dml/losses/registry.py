"""The built-in losses, registered by name, for configuration files and the CLI.

The table and its look-ups (`get`, `list_losses`, `register_loss`) live in
`keras_dml.losses.loss_lookup`; this module fills the table and re-exports them.
"""

from keras_dml.losses.additive_margin import ArcFaceLoss, CosFaceLoss
from keras_dml.losses.binomial_deviance import BinomialDevianceLoss
from keras_dml.losses.circle import CircleLoss
from keras_dml.losses.contrastive import ContrastiveLoss
from keras_dml.losses.cross_batch_memory import CrossBatchMemory
from keras_dml.losses.fast_ap import FastAPLoss
from keras_dml.losses.lifted_structure import LiftedStructureLoss
from keras_dml.losses.loss_lookup import LAYER_LOSSES, LOSSES, get, list_losses, register_loss
from keras_dml.losses.margin import MarginLoss
from keras_dml.losses.margin_layer import LearnableMarginLoss
from keras_dml.losses.multi_similarity import MultiSimilarityLoss
from keras_dml.losses.normalized_softmax import NormalizedSoftmaxLoss
from keras_dml.losses.npairs import NPairsLoss
from keras_dml.losses.ntxent import NTXentLoss
from keras_dml.losses.proxy_anchor import ProxyAnchorLoss
from keras_dml.losses.proxy_nca import ProxyNCALoss
from keras_dml.losses.snr_contrastive import SNRContrastiveLoss
from keras_dml.losses.soft_triple import SoftTripleLoss
from keras_dml.losses.subcenter_arcface import SubCenterArcFaceLoss
from keras_dml.losses.supcon import SupConLoss
from keras_dml.losses.triplet import TripletLoss
from keras_dml.losses.tuplet_margin import TupletMarginLoss

LOSSES.update(
    {
        "contrastive": ContrastiveLoss,
        "triplet": TripletLoss,
        "margin": MarginLoss,
        "learnable_margin": LearnableMarginLoss,
        "binomial_deviance": BinomialDevianceLoss,
        "proxy_nca": ProxyNCALoss,
        "multi_similarity": MultiSimilarityLoss,
        "normalized_softmax": NormalizedSoftmaxLoss,
        "proxy_anchor": ProxyAnchorLoss,
        "arcface": ArcFaceLoss,
        "cosface": CosFaceLoss,
        "ntxent": NTXentLoss,
        "supcon": SupConLoss,
        "circle": CircleLoss,
        "lifted_structure": LiftedStructureLoss,
        "npairs": NPairsLoss,
        "tuplet_margin": TupletMarginLoss,
        "snr_contrastive": SNRContrastiveLoss,
        "subcenter_arcface": SubCenterArcFaceLoss,
        "soft_triple": SoftTripleLoss,
        "fast_ap": FastAPLoss,
        "cross_batch_memory": CrossBatchMemory,
    }
)

# Losses that hold weights (trainable, or XBM's memory): `keras.layers.Layer`s the model must own.
LAYER_LOSSES.extend(
    [
        "cross_batch_memory",
        "learnable_margin",
        "proxy_nca",
        "normalized_softmax",
        "proxy_anchor",
        "arcface",
        "cosface",
        "subcenter_arcface",
        "soft_triple",
    ]
)

__all__ = ["LAYER_LOSSES", "LOSSES", "get", "list_losses", "register_loss"]
