"""Normalised softmax loss (Zhai & Wu 2019): cosine logits over a temperature, cross-entropy."""

import keras
from keras import ops

from keras_dml.losses.class_weights import (
    ClassWeightLoss,
    cosine_logits,
    mean_over_samples,
    prepare_class_inputs,
)
from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import one_hot_in_range
from keras_dml.pairs.reduction import finish


def normalized_softmax_loss(
    labels, embeddings, class_weights, temperature=0.05, return_count=False
):
    """Softmax cross-entropy on cosine logits between embeddings and class weights.

    `l(x, y) = -log( exp(x.w_y / T) / sum_{c=1..C} exp(x.w_c / T) )` with `x` and every `w_c`
    L2-normalised, averaged over the batch.

    Args:
        labels: int tensor `[B]`. Class ids in `[0, C)`; others raise a `ValueError` in an eager
            call and give a NaN loss inside a traced graph.
        embeddings: float tensor `[B, D]`. Embeddings (normalised inside).
        class_weights: float tensor `[C, D]`. One weight vector per class (normalised inside).
        temperature: float. Divides the cosine logits; small values sharpen the softmax.
            Defaults to `0.05` (the paper's choice).
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_samples)`; 0.0 for an empty batch, NaN when an embedding
        holds NaN or Inf.

    Examples:
    >>> weights = keras.random.normal((10, 8))
    >>> loss = normalized_softmax_loss([0, 3, 3, 7], keras.random.normal((4, 8)), weights)

    References:
        Zhai & Wu, "Classification is a Strong Baseline for Deep Metric Learning", BMVC 2019,
        Sec. 3 (normalised softmax loss with temperature scaling; temperature 0.05).
    """
    if temperature <= 0:
        raise ValueError(f"`temperature` must be > 0. Received: temperature={temperature}")
    labels, embeddings, class_weights, invalid = prepare_class_inputs(
        labels, embeddings, class_weights
    )
    logits = cosine_logits(embeddings, class_weights) / temperature
    targets = one_hot_in_range(labels, class_weights.shape[0])
    per_sample = ops.logsumexp(logits, axis=1) - ops.sum(targets * logits, axis=1)
    loss, count = mean_over_samples(per_sample, invalid)
    return finish(loss, count, return_count, embeddings=embeddings)


@register_loss("normalized_softmax")
@keras.saving.register_keras_serializable(package="keras_dml")
class NormalizedSoftmaxLoss(ClassWeightLoss):
    """Normalised softmax loss as a layer owning the class weights `[num_classes, dim]`.

    Pass it to `EmbeddingModel.compile(loss=...)`: the model then owns the layer (its class
    weights train with the model, are saved in `.keras` files and are left out of exports).

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        temperature: float. Temperature of the cosine logits. Defaults to `0.05`.
        weights_initializer: initializer of the class weights. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_samples)`.

    Examples:
    >>> loss_layer = NormalizedSoftmaxLoss(num_classes=100, embedding_dim=128)
    >>> model.compile(optimizer="adam", loss=loss_layer)  # model: an EmbeddingModel

    References:
        Zhai & Wu, "Classification is a Strong Baseline for Deep Metric Learning", BMVC 2019,
        Sec. 3.
    """

    WEIGHTS_NAME = "class_weights"
    LOSS_ARGUMENTS = ("temperature",)
    loss_fn = staticmethod(normalized_softmax_loss)

    def __init__(self, num_classes=None, embedding_dim=None, temperature=0.05, **kwargs):
        if temperature <= 0:
            raise ValueError(f"`temperature` must be > 0. Received: temperature={temperature}")
        super().__init__(num_classes, embedding_dim, **kwargs)
        self.temperature = float(temperature)
