"""Multi-class N-pair loss (Sohn 2016) on one (anchor, positive) pair per class of the batch."""

import keras
from keras import ops

from keras_dml.losses.base import REDUCTION, MetricLoss
from keras_dml.losses.pair_loss import pair_loss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import diagonal_mask
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true


def first_pair_per_class(pos_mask):
    """`(is_anchor [B], positive_of [B, B])`: each class's first sample and its second one."""
    index = ops.arange(ops.shape(pos_mask)[0])
    earlier = ops.less(ops.expand_dims(index, 0), ops.expand_dims(index, 1))  # [i, j]: j < i
    rank = count_true(ops.logical_and(pos_mask, earlier), axis=1)  # earlier samples of its class
    is_anchor = ops.logical_and(ops.equal(rank, 0.0), ops.any(pos_mask, axis=1))
    is_second = ops.equal(rank, 1.0)
    positive_of = ops.logical_and(
        ops.logical_and(pos_mask, ops.expand_dims(is_second, 0)), ops.expand_dims(is_anchor, 1)
    )
    return is_anchor, positive_of


def npairs_formula(inner_products, pos_mask, neg_mask):
    """`(loss, N^2)`: the N-pair loss on the inner products `[B, B]` and the pair masks."""
    is_anchor, positive_of = first_pair_per_class(pos_mask)
    # [i, j]: f_i . f_j^+, the anchor's inner product with the positive of anchor j.
    logits = ops.matmul(inner_products, ops.transpose(ops.cast(positive_of, "float32")))
    tuples = ops.logical_and(ops.expand_dims(is_anchor, 1), ops.expand_dims(is_anchor, 0))
    target = ops.sum(ops.where(diagonal_mask(ops.shape(logits)[0]), logits, 0.0), axis=1)
    per_anchor = ops.where(is_anchor, masked_logsumexp(logits, tuples, axis=1) - target, 0.0)
    num_pairs = count_true(is_anchor)
    valid = num_pairs >= 2.0
    loss = ops.where(valid, ops.sum(per_anchor) / ops.maximum(num_pairs, 1.0), 0.0)
    return loss, ops.where(valid, ops.square(num_pairs), 0.0)


def npairs_loss(labels, embeddings, normalize_embeddings=False, return_count=False):
    """Multi-class N-pair loss on each class's first two samples (no `pair_mask`).

    `1/N sum_i log(1 + sum_{j != i} exp(f_i . f_j^+ - f_i . f_i^+))` over the `N` classes with
    two or more samples.

    Args:
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.

    References:
        Sohn, "Improved Deep Metric Learning with Multi-class N-pair Loss Objective",
        NeurIPS 2016, Sec. 3.2 (without the L2 penalty on the embeddings).
    """
    return pair_loss(
        labels,
        embeddings,
        npairs_formula,
        "inner_product",
        normalize_embeddings=normalize_embeddings,
        return_count=return_count,
    )


@register_loss("npairs")
@keras.saving.register_keras_serializable(package="keras_dml")
class NPairsLoss(MetricLoss):
    """Multi-class N-pair loss as a `keras.losses.Loss` over `(labels, embeddings)`."""

    def __init__(
        self, normalize_embeddings=False, name="npairs_loss", reduction=REDUCTION, dtype=None
    ):
        normalize = bool(normalize_embeddings)
        super().__init__(npairs_loss, name, reduction, dtype, normalize_embeddings=normalize)
