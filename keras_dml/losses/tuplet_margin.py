"""Tuplet margin loss (Yu & Tao 2019): a softmax over negatives with an angular margin."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import cosine_similarity_matrix, prepare_inputs, safe_sqrt
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks


def tuplet_margin_loss(
    labels, embeddings, margin=0.1, scale=64.0, pair_mask=None, return_count=False
):
    """Tuplet margin loss (a pair loss) over every positive pair of a batch.

    For a positive pair `(a, p)` at angle `theta_ap` and the negatives `n` of `a`:
    `l_ap = log(1 + sum_n exp(s (cos(theta_an) - cos(theta_ap - beta))))`, averaged over all
    ordered positive pairs (as pytorch-metric-learning's `TupletMarginLoss`). The margin makes
    the positive look farther than it is. `cos(theta - beta)` is computed as
    `cos(theta) cos(beta) + sin(theta) sin(beta)`, which keeps gradients finite where `acos`
    has none (`cos(theta) = 1`).

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (cosine similarity is scale-invariant).
        margin: float. The angular margin `beta`, in radians. Defaults to `0.1` (PML's 5.73
            degrees).
        scale: float > 0. The scale `s`. Defaults to `64.0`.
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner).
            Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs used (positive pairs and
            the negatives of their anchors). Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when the batch has no positive or no
        negative pair.

    Examples:
    >>> loss = tuplet_margin_loss([0, 0, 1, 1], keras.random.normal((4, 8)), margin=0.1)

    References:
        Yu, Tao, "Deep Metric Learning with Tuplet Margin Loss", ICCV 2019, Sec. 3 (the tuplet
        margin loss; its intra-pair variance term is not included).
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    cosines = cosine_similarity_matrix(embeddings)
    sines = safe_sqrt(ops.relu(1.0 - ops.square(cosines)))
    shifted = cosines * ops.cos(margin) + sines * ops.sin(margin)  # cos(theta - beta)
    negatives = ops.expand_dims(masked_logsumexp(scale * cosines, neg_mask, axis=1), 1)
    has_negative = ops.any(neg_mask, axis=1, keepdims=True)
    # log(1 + sum_n e^{s c_n - s c'}) = softplus(logsumexp_n(s c_n) - s c')
    pair_losses = ops.where(has_negative, ops.softplus(negatives - scale * shifted), 0.0)
    loss, num_pos = masked_mean(pair_losses, pos_mask)
    valid = ops.logical_and(ops.any(pos_mask), ops.any(neg_mask))
    has_positive = ops.any(pos_mask, axis=1, keepdims=True)
    num_neg = count_true(ops.logical_and(neg_mask, has_positive))
    count = ops.where(valid, ops.cast(num_pos, "float32") + num_neg, 0.0)
    return finish(ops.where(valid, loss, 0.0), count, return_count, embeddings=embeddings)


@register_loss("tuplet_margin")
@keras.saving.register_keras_serializable(package="keras_dml")
class TupletMarginLoss(MetricLoss):
    """Tuplet margin pair loss as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        margin: float. Angular margin in radians. Defaults to `0.1`.
        scale: float > 0. Defaults to `64.0`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"tuplet_margin_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=TupletMarginLoss(margin=0.1, scale=64.0))

    References:
        Yu, Tao, "Deep Metric Learning with Tuplet Margin Loss", ICCV 2019, Sec. 3.
    """

    def __init__(
        self,
        margin=0.1,
        scale=64.0,
        miner=None,
        name="tuplet_margin_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        if not float(scale) > 0.0:
            raise ValueError(
                f"`scale` must be > 0 (it multiplies the cosines; try 64). Received: scale={scale}"
            )
        self.margin = float(margin)
        self.scale = float(scale)
        super().__init__(
            tuplet_margin_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            margin=self.margin,
            scale=self.scale,
        )
