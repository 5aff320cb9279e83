"""Normalised softmax loss (Zhai & Wu 2019): cosine logits over a temperature, cross-entropy."""

import keras

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    cosine_logits,
    mean_over_samples,
    prepare_class_inputs,
    softmax_cross_entropy,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import one_hot_in_range
from keras_dml.pairs.reduction import finish


def check_temperature(temperature):
    """Raises a one-line `ValueError` unless `temperature` is > 0."""
    if temperature <= 0:
        raise ValueError(f"`temperature` must be > 0. Received: temperature={temperature}")


def normalized_softmax_loss(
    labels, embeddings, class_weights, temperature=0.05, return_count=False
):
    """Softmax cross-entropy on the cosine logits `x.w_c / T`, averaged over the batch.

    Every class-based loss function takes `labels` (class ids in `[0, C)`; others raise eagerly
    and give NaN in a traced graph), `embeddings` `[B, D]`, its class vectors and
    `return_count`, and returns the float32 loss or `(loss, num_samples)`.

    Args:
        class_weights: float tensor `[C, D]`. One weight vector per class.
        temperature: float > 0. Divides the cosine logits. Defaults to `0.05`.

    References:
        Zhai & Wu, "Classification is a Strong Baseline for Deep Metric Learning", BMVC 2019,
        Sec. 3.
    """
    check_temperature(temperature)
    labels, embeddings, class_weights, invalid = prepare_class_inputs(
        labels, embeddings, class_weights
    )
    logits = cosine_logits(embeddings, class_weights) / temperature
    targets = one_hot_in_range(labels, class_weights.shape[0])
    loss, count = mean_over_samples(softmax_cross_entropy(logits, targets), invalid)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("normalized_softmax")
@keras.saving.register_keras_serializable(package="keras_dml")
class NormalizedSoftmaxLoss(ClassWeightLoss):
    """Normalised softmax loss as a layer owning the class weights `[num_classes, dim]`.

    Takes `normalized_softmax_loss`'s hyper-parameters and `ClassWeightLoss`'s arguments.
    """

    LOSS_ARGUMENTS = ("temperature",)
    loss_fn = staticmethod(normalized_softmax_loss)

    def __init__(self, num_classes=None, embedding_dim=None, temperature=0.05, **kwargs):
        check_temperature(temperature)
        self.temperature = float(temperature)
        super().__init__(num_classes, embedding_dim, **kwargs)
