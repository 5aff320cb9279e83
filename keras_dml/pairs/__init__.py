"""Pair math under the losses and the miners: distances, label masks, selections, reductions."""

from keras_dml.pairs.batch import MATRICES, pair_batch
from keras_dml.pairs.distances import (
    cosine_similarity_matrix,
    diagonal_mask,
    inner_products,
    l2_normalize,
    one_hot_in_range,
    pairwise_distances,
    pairwise_squared_distances,
    prepare_inputs,
    safe_sqrt,
)
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import (
    LARGE_VALUE,
    count_true,
    masked_max,
    masked_min,
    negative_mask,
    positive_mask,
    triplet_mask,
)
from keras_dml.pairs.reduction import (
    finish,
    masked_mean,
    mean_over_anchors,
    mean_over_positive_pairs,
    mean_over_queries,
    propagate_nonfinite,
    reduce_pair_losses,
)
from keras_dml.pairs.references import ReferenceBlock, with_pairs
from keras_dml.pairs.selected_pairs import selected_pair_masks
from keras_dml.pairs.selections import PairSelection, TripletSelection

__all__ = [
    "LARGE_VALUE",
    "MATRICES",
    "PairSelection",
    "ReferenceBlock",
    "TripletSelection",
    "cosine_similarity_matrix",
    "count_true",
    "diagonal_mask",
    "finish",
    "inner_products",
    "l2_normalize",
    "masked_logsumexp",
    "masked_max",
    "masked_mean",
    "masked_min",
    "mean_over_anchors",
    "mean_over_positive_pairs",
    "mean_over_queries",
    "negative_mask",
    "one_hot_in_range",
    "pair_batch",
    "pairwise_distances",
    "pairwise_squared_distances",
    "positive_mask",
    "prepare_inputs",
    "propagate_nonfinite",
    "reduce_pair_losses",
    "safe_sqrt",
    "selected_pair_masks",
    "triplet_mask",
    "with_pairs",
]
