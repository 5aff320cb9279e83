"""Proxy-Anchor loss (Kim et al. 2020): each class proxy is an anchor for the whole batch."""

import keras
from keras import ops

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    cosine_logits,
    poison_if,
    prepare_class_inputs,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import one_hot_in_range
from keras_dml.pairs.log_sum_exp import masked_logsumexp
from keras_dml.pairs.reduction import finish


def check_alpha(alpha):
    """Raises a one-line `ValueError` unless `alpha` is > 0."""
    if alpha <= 0:
        raise ValueError(f"`alpha` must be > 0. Received: alpha={alpha}")


def proxy_anchor_loss(labels, embeddings, proxies, alpha=32.0, delta=0.1, return_count=False):
    """Proxy-Anchor loss of a batch against one proxy per class.

    `1/|P+| sum_{P+} log(1 + sum_{X_p+} exp(-alpha (s - delta))) + 1/|P| sum_P log(1 +
    sum_{X_p-} exp(alpha (s + delta)))`, `P+` the proxies of the classes in the batch.

    Args:
        proxies: float tensor `[C, D]`. One proxy per class.
        alpha: float > 0. Scale. Defaults to `32.0`.
        delta: float. Margin. Defaults to `0.1`.

    References:
        Kim et al., "Proxy Anchor Loss for Deep Metric Learning", CVPR 2020, Eq. 4.
    """
    check_alpha(alpha)
    labels, embeddings, proxies, invalid = prepare_class_inputs(
        labels, embeddings, proxies, weights_name="proxies"
    )
    num_classes = proxies.shape[0]
    similarities = cosine_logits(embeddings, proxies)  # [B, C]
    positive = one_hot_in_range(labels, num_classes) > 0.0
    negative = ops.logical_not(positive)
    positive_terms = masked_logsumexp(-alpha * (similarities - delta), positive, 0, add_one=True)
    negative_terms = masked_logsumexp(alpha * (similarities + delta), negative, 0, add_one=True)
    num_with_positives = ops.sum(ops.cast(ops.any(positive, axis=0), "float32"))
    loss = ops.sum(positive_terms) / ops.maximum(num_with_positives, 1.0) + ops.sum(
        negative_terms
    ) / float(num_classes)
    count = ops.shape(labels)[0]
    return finish(poison_if(loss, invalid), count, return_count, embeddings=embeddings)


@register_loss("proxy_anchor")
@keras.saving.register_keras_serializable(package="keras_dml")
class ProxyAnchorLoss(ClassWeightLoss):
    """Proxy-Anchor loss as a layer owning the trainable proxies `[num_classes, dim]`.

    Takes `proxy_anchor_loss`'s hyper-parameters and `ClassWeightLoss`'s arguments.
    """

    WEIGHTS_NAME = "proxies"
    LOSS_ARGUMENTS = ("alpha", "delta")
    loss_fn = staticmethod(proxy_anchor_loss)
    # Kim et al. (2020), Sec. 5.1: proxies at 100x the learning rate.
    recommended_lr_multipliers = {"proxies$": 100.0}

    def __init__(self, num_classes=None, embedding_dim=None, alpha=32.0, delta=0.1, **kwargs):
        check_alpha(alpha)
        self.alpha = float(alpha)
        self.delta = float(delta)
        super().__init__(num_classes, embedding_dim, **kwargs)
