"""Deep metric learning losses: pure `keras.ops` functions and serializable Loss classes.

Every loss takes `(labels [B] int, embeddings [B, D])` and computes in float32. Losses without
trainable parameters are `keras.losses.Loss` classes for `model.compile(loss=...)`; losses with
trainable parameters (`LearnableMarginLoss`, `ProxyNCALoss`, and the class-based
`NormalizedSoftmaxLoss`, `ProxyAnchorLoss`, `ArcFaceLoss`, `CosFaceLoss`) are layers the model owns
(`EmbeddingModel.compile(loss=layer)` attaches one). Every
function accepts `return_count=True` to also return the number of valid pairs / triplets, and
every class has `loss_and_count(y_true, y_pred)`; a batch with nothing valid gives a finite 0.0.
Per-pair building blocks (`*_pairs`, masks, distances, `reduce_pair_losses`) are public so
ensemble methods (BIER boosting, D&C, DCML) can weight and combine pair losses themselves.
"""

from keras_dml.losses.additive_margin import (
    ArcFaceLoss,
    CosFaceLoss,
    arcface_loss,
    arcface_target_logit,
    cosface_loss,
)
from keras_dml.losses.argument_config import ArgumentConfig
from keras_dml.losses.base import MetricLoss
from keras_dml.losses.binomial_deviance import (
    BinomialDevianceLoss,
    binomial_deviance_loss,
    binomial_deviance_pairs,
)
from keras_dml.losses.circle import CircleLoss, circle_loss
from keras_dml.losses.class_weights import (
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
from keras_dml.losses.log_sum_exp import masked_logsumexp
from keras_dml.losses.margin import MarginLoss, margin_loss, margin_pairs
from keras_dml.losses.margin_layer import LearnableMarginLoss
from keras_dml.losses.mining import negative_mask, positive_mask, triplet_mask
from keras_dml.losses.multi_similarity import MultiSimilarityLoss, multi_similarity_loss
from keras_dml.losses.normalized_softmax import NormalizedSoftmaxLoss, normalized_softmax_loss
from keras_dml.losses.npairs import NPairsLoss, npairs_loss
from keras_dml.losses.ntxent import NTXentLoss, ntxent_loss
from keras_dml.losses.pair_selection import selected_pair_masks
from keras_dml.losses.pairwise import (
    cosine_similarity_matrix,
    l2_normalize,
    pairwise_distances,
    pairwise_squared_distances,
    prepare_inputs,
    safe_sqrt,
)
from keras_dml.losses.proxy_anchor import ProxyAnchorLoss, proxy_anchor_loss
from keras_dml.losses.proxy_nca import ProxyNCALoss, proxy_nca_loss
from keras_dml.losses.reduction import masked_mean, reduce_pair_losses
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
    "ArgumentConfig",
    "LOSSES",
    "ArcFaceLoss",
    "BinomialDevianceLoss",
    "CircleLoss",
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
    "cosine_similarity_matrix",
    "fast_ap_loss",
    "get",
    "list_losses",
    "l2_normalize",
    "lifted_structure_loss",
    "margin_loss",
    "margin_pairs",
    "masked_logsumexp",
    "masked_mean",
    "multi_similarity_loss",
    "negative_mask",
    "normalized_softmax_loss",
    "npairs_loss",
    "ntxent_loss",
    "pairwise_distances",
    "pairwise_squared_distances",
    "positive_mask",
    "prepare_inputs",
    "proxy_anchor_loss",
    "proxy_nca_loss",
    "reduce_pair_losses",
    "register_loss",
    "safe_sqrt",
    "selected_pair_masks",
    "snr_contrastive_loss",
    "snr_distances",
    "soft_triple_loss",
    "subcenter_arcface_loss",
    "supcon_loss",
    "triplet_loss",
    "triplet_mask",
    "triplet_values",
    "tuplet_margin_loss",
]
