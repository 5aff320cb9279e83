"""Deep metric learning losses: pure `keras.ops` functions, their `Loss` classes and loss layers."""

from keras_dml.losses.additive_margin import (
    ArcFaceLoss,
    CosFaceLoss,
    arcface_loss,
    arcface_target_logit,
    cosface_loss,
)
from keras_dml.losses.base import MetricLoss
from keras_dml.losses.binomial_deviance import (
    BinomialDevianceLoss,
    binomial_deviance_loss,
    binomial_deviance_pairs,
)
from keras_dml.losses.circle import CircleLoss, circle_loss
from keras_dml.losses.class_weights import (
    ClassVectorLoss,
    ClassWeightLoss,
    class_loss_with_weights,
    is_class_loss,
    with_class_arguments,
)
from keras_dml.losses.contrastive import (
    ContrastiveLoss,
    contrastive_loss,
    contrastive_pairs,
    cosine_contrastive_pairs,
    squared_contrastive_pairs,
)
from keras_dml.losses.cross_batch_memory import (
    CrossBatchMemory,
    check_memory_count,
    is_memory_loss,
    with_memory_count,
)
from keras_dml.losses.fast_ap import FastAPLoss, fast_ap_loss
from keras_dml.losses.lifted_structure import LiftedStructureLoss, lifted_structure_loss
from keras_dml.losses.margin import MarginLoss, margin_loss, margin_pairs
from keras_dml.losses.margin_layer import LearnableMarginLoss
from keras_dml.losses.multi_similarity import MultiSimilarityLoss, multi_similarity_loss
from keras_dml.losses.normalized_softmax import NormalizedSoftmaxLoss, normalized_softmax_loss
from keras_dml.losses.npairs import NPairsLoss, npairs_loss
from keras_dml.losses.ntxent import NTXentLoss, ntxent_loss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.proxy_anchor import ProxyAnchorLoss, proxy_anchor_loss
from keras_dml.losses.proxy_nca import ProxyNCALoss, proxy_nca_loss
from keras_dml.losses.registry import LOSSES, get, list_losses, register_loss
from keras_dml.losses.snr_contrastive import (
    SNRContrastiveLoss,
    snr_contrastive_loss,
    snr_distances,
)
from keras_dml.losses.soft_triple import SoftTripleLoss, soft_triple_loss
from keras_dml.losses.subcenter_arcface import SubCenterArcFaceLoss, subcenter_arcface_loss
from keras_dml.losses.supcon import SupConLoss, supcon_loss
from keras_dml.losses.triplet import TripletLoss, triplet_loss, triplet_values
from keras_dml.losses.tuplet_margin import TupletMarginLoss, tuplet_margin_loss

__all__ = [
    "LOSSES",
    "ArcFaceLoss",
    "BinomialDevianceLoss",
    "CircleLoss",
    "ClassVectorLoss",
    "ClassWeightLoss",
    "class_loss_with_weights",
    "is_class_loss",
    "with_class_arguments",
    "ContrastiveLoss",
    "CrossBatchMemory",
    "check_memory_count",
    "is_memory_loss",
    "with_memory_count",
    "FastAPLoss",
    "CosFaceLoss",
    "LearnableMarginLoss",
    "LiftedStructureLoss",
    "MarginLoss",
    "MetricLoss",
    "MultiSimilarityLoss",
    "NPairsLoss",
    "NTXentLoss",
    "NormalizedSoftmaxLoss",
    "ProxyAnchorLoss",
    "ProxyNCALoss",
    "SNRContrastiveLoss",
    "SoftTripleLoss",
    "SubCenterArcFaceLoss",
    "SupConLoss",
    "TripletLoss",
    "TupletMarginLoss",
    "arcface_loss",
    "arcface_target_logit",
    "binomial_deviance_loss",
    "binomial_deviance_pairs",
    "circle_loss",
    "contrastive_loss",
    "contrastive_pairs",
    "cosine_contrastive_pairs",
    "squared_contrastive_pairs",
    "cosface_loss",
    "fast_ap_loss",
    "get",
    "list_losses",
    "lifted_structure_loss",
    "margin_loss",
    "margin_pairs",
    "multi_similarity_loss",
    "normalized_softmax_loss",
    "npairs_loss",
    "ntxent_loss",
    "pair_loss",
    "proxy_anchor_loss",
    "proxy_nca_loss",
    "register_loss",
    "snr_contrastive_loss",
    "snr_distances",
    "soft_triple_loss",
    "subcenter_arcface_loss",
    "supcon_loss",
    "triplet_loss",
    "triplet_values",
    "tuplet_margin_loss",
]
