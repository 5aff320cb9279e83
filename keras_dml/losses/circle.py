"""Circle loss with pair-wise labels (Sun et al. 2020)."""

import keras
from keras import ops

from keras_dml.losses.base import MetricLoss
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import cosine_similarity_matrix, prepare_inputs
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.masks import count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.pairs.selected_pairs import selected_pair_masks


def circle_loss(labels, embeddings, margin=0.4, gamma=80.0, pair_mask=None, return_count=False):
    """Circle loss (a pair loss) on cosine similarities, one term per anchor.

    For an anchor with positive similarities `s_p` and negative similarities `s_n`:
    `L = log(1 + sum_n exp(gamma a_n (s_n - D_n)) sum_p exp(-gamma a_p (s_p - D_p)))` with the
    self-paced weights `a_p = [O_p - s_p]_+`, `a_n = [s_n - O_n]_+` (constants: no gradient flows
    through them) and `O_p = 1 + m`, `O_n = -m`, `D_p = 1 - m`, `D_n = m`. Averaged over the
    anchors with at least one positive and one negative (pytorch-metric-learning's `CircleLoss`).

    Args:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, D]`. Embeddings (cosine similarity is scale-invariant).
        margin: float. The relaxation `m`. Defaults to `0.4` (the paper's fine-grained retrieval
            setting).
        gamma: float > 0. The scale. Defaults to `80.0`.
        pair_mask: optional bool tensor `[B, B]`: the pairs to use (e.g. from a miner).
            Defaults to `None` (all pairs).
        return_count: bool. Also return the int32 number of pairs of the contributing anchors.
            Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when no anchor has both a positive and a
        negative.

    Examples:
    >>> loss = circle_loss([0, 0, 1, 1], keras.random.normal((4, 8)), margin=0.25, gamma=128.0)

    References:
        Sun et al., "Circle Loss: A Unified Perspective of Pair Similarity Optimization",
        CVPR 2020, Sec. 3.1 (self-paced weights, the loss with pair-wise labels) and Sec. 3.2
        (margins; `O_p`, `O_n`, `D_p`, `D_n` from `m`).
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    pos_mask, neg_mask = selected_pair_masks(labels, pair_mask)
    similarities = cosine_similarity_matrix(embeddings)
    fixed = ops.stop_gradient(similarities)
    alpha_p = ops.relu(1.0 + margin - fixed)
    alpha_n = ops.relu(fixed + margin)
    positive_logits = -gamma * alpha_p * (similarities - (1.0 - margin))
    negative_logits = gamma * alpha_n * (similarities - margin)
    # log(1 + sum_n e^{x_n} sum_p e^{y_p}) = softplus(logsumexp_n x + logsumexp_p y)
    per_anchor = ops.softplus(
        masked_logsumexp(negative_logits, neg_mask, axis=1)
        + masked_logsumexp(positive_logits, pos_mask, axis=1)
    )
    anchor_valid = ops.logical_and(ops.any(pos_mask, axis=1), ops.any(neg_mask, axis=1))
    loss, _ = masked_mean(ops.where(anchor_valid, per_anchor, 0.0), anchor_valid)
    pairs = ops.logical_or(pos_mask, neg_mask)
    count = count_true(ops.logical_and(pairs, ops.expand_dims(anchor_valid, 1)))
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("circle")
@keras.saving.register_keras_serializable(package="keras_dml")
class CircleLoss(MetricLoss):
    """Circle loss (pair-wise labels) as a `keras.losses.Loss` over `(labels, embeddings)`.

    Args:
        margin: float. The relaxation `m`. Defaults to `0.4`.
        gamma: float > 0. The scale. Defaults to `80.0`.
        miner: optional pair miner (`keras_dml.miners.PairMiner`, a registered name or a
            config dict): the loss is computed on the pairs it keeps. Defaults to `None`.
        name: str. Defaults to `"circle_loss"`.
        reduction: str. Keras reduction of the scalar. Defaults to `"sum_over_batch_size"`.
        dtype: computation dtype. Defaults to `"float32"`.

    Call arguments:
        y_true: int tensor `[B]`. Class labels.
        y_pred: float tensor `[B, D]`. Embeddings.

    Returns:
        float32 scalar loss; `loss_and_count(y_true, y_pred)` also returns the pair count.

    Examples:
    >>> model.compile(optimizer="adam", loss=CircleLoss(margin=0.25, gamma=256.0))

    References:
        Sun et al., "Circle Loss: A Unified Perspective of Pair Similarity Optimization",
        CVPR 2020, Sec. 3.1 and 3.2.
    """

    def __init__(
        self,
        margin=0.4,
        gamma=80.0,
        miner=None,
        name="circle_loss",
        reduction="sum_over_batch_size",
        dtype=None,
    ):
        if not float(gamma) > 0.0:
            raise ValueError(
                f"`gamma` must be > 0 (the scale of the similarities; try 80). "
                f"Received: gamma={gamma}"
            )
        self.margin = float(margin)
        self.gamma = float(gamma)
        super().__init__(
            circle_loss,
            name=name,
            reduction=reduction,
            dtype=dtype,
            miner=miner,
            margin=self.margin,
            gamma=self.gamma,
        )
