"""Multi-class N-pair loss (Sohn 2016) on one (anchor, positive) pair per class of the batch."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import diagonal_mask, l2_normalize, prepare_inputs
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import finish


def first_pair_per_class(labels):
    """The anchors (first sample of a class with two or more) and their positives (second).

    Args:
        labels: int tensor `[B]`.

    Returns:
        Tuple `(is_anchor, positive_of)`: bool `[B]`, and bool `[B, B]` with row `i` marking the
        positive of anchor `i` (all False for other rows).
    """
    same = ops.equal(ops.expand_dims(labels, 1), ops.expand_dims(labels, 0))
    index = ops.arange(ops.shape(labels)[0])
    earlier = ops.less(ops.expand_dims(index, 0), ops.expand_dims(index, 1))  # [i, j]: j < i
    rank = count_true(ops.logical_and(same, earlier), axis=1)  # earlier samples of its class
    is_anchor = ops.logical_and(ops.equal(rank, 0.0), count_true(same, axis=1) >= 2.0)
    is_second = ops.equal(rank, 1.0)
    positive_of = ops.logical_and(
        ops.logical_and(same, ops.expand_dims(is_second, 0)), ops.expand_dims(is_anchor, 1)
    )
    return is_anchor, positive_of


def npairs_loss(labels, embeddings, normalize_embeddings=False, return_count=False):
    """Multi-class N-pair loss (a pair loss that builds its own N-pair tuples).

    From the batch it takes one pair `(x_i, x_i^+)` per class with two or more samples (the
    class's first and second sample, as pytorch-metric-learning's `NPairsLoss`), and with
    `f` the embeddings: `L = 1/N sum_i log(1 + sum_{j != i} exp(f_i . f_j^+ - f_i . f_i^+))`,
    a softmax cross-entropy of each anchor over the `N` positives. Other samples are unused.

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings; raw inner products as in the paper.
        normalize_embeddings: bool. L2-normalise the embeddings first (cosine similarities;
            PML's default distance does). Defaults to `False`.
        return_count: bool. Also return the int32 number of similarities the softmaxes use
            (`N^2`: `N` positive and `N (N - 1)` negative pairs). Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when fewer than two classes have a pair.

    Examples:
    >>> loss = npairs_loss([0, 0, 1, 1, 2, 2], keras.random.normal((6, 8)))

    References:
        Sohn, "Improved Deep Metric Learning with Multi-class N-pair Loss Objective",
        NeurIPS 2016, Sec. 3.2 (the multi-class N-pair loss, N-pair-mc). The paper's small L2
        penalty on the embeddings is not part of this loss.
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    if normalize_embeddings:
        embeddings = l2_normalize(embeddings)
    is_anchor, positive_of = first_pair_per_class(labels)
    positives = ops.matmul(ops.cast(positive_of, "float32"), embeddings)  # row i: x_i^+
    logits = ops.matmul(embeddings, ops.transpose(positives))  # [i, j]: f_i . f_j^+
    tuples = ops.logical_and(ops.expand_dims(is_anchor, 1), ops.expand_dims(is_anchor, 0))
    target = ops.sum(ops.where(diagonal_mask(ops.shape(labels)[0]), logits, 0.0), axis=1)
    per_anchor = ops.where(is_anchor, masked_logsumexp(logits, tuples, axis=1) - target, 0.0)
    num_pairs = count_true(is_anchor)
    valid = num_pairs >= 2.0
    loss = ops.where(valid, ops.sum(per_anchor) / ops.maximum(num_pairs, 1.0), 0.0)
    count = ops.where(valid, ops.square(num_pairs), 0.0)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("npairs")
@keras.saving.register_keras_serializable(package="keras_dml")
class NPairsLoss(MetricLoss):
    """Multi-class N-pair loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        normalize_embeddings: bool. L2-normalise the embeddings first. Defaults to `False`.
        name: str. Defaults to `"npairs_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=NPairsLoss())

    References:
        Sohn, "Improved Deep Metric Learning with Multi-class N-pair Loss Objective",
        NeurIPS 2016, Sec. 3.2.
    """

    def __init__(
        self,
        normalize_embeddings=False,
        name="npairs_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        self.normalize_embeddings = bool(normalize_embeddings)
        super().__init__(
            npairs_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            normalize_embeddings=self.normalize_embeddings,
        )
