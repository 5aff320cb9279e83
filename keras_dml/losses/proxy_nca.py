"""Proxy-NCA loss (Movshovitz-Attias et al. 2017) with trainable class proxies."""

import keras
from keras import ops

from keras_dml.losses.registry import register_loss
from keras_dml.pairs.distances import l2_normalize, one_hot_in_range, prepare_inputs
from keras_dml.pairs.masks import LARGE_VALUE, count_true
from keras_dml.pairs.reduction import finish, masked_mean
from keras_dml.utils.argument_config import ArgumentConfig


def proxy_nca_loss(
    labels, embeddings, proxies, scale=3.0, exclude_positive=True, return_count=False
):
    """Proxy-NCA loss of each embedding against one proxy per class.

    With `x = scale * x / |x|` and `p = scale * p / |p|`,
    `l(x, y) = -log( exp(-d(x, p_y)) / sum_{z in Z} exp(-d(x, p_z)) )`, `d` the squared
    Euclidean distance and `Z` all classes except `y` (the paper's NCA form), or all classes
    including `y` (a softmax cross-entropy, as many implementations use) with
    `exclude_positive=False`.

    Args:
        labels: int tensor `[B]`. Class labels in `[0, num_classes)`; samples with other labels
            are ignored (not counted).
        embeddings: float tensor `[B, D]`. Embeddings.
        proxies: float tensor `[C, D]`. One (unnormalised) proxy per class.
        scale: float. Norm of embeddings and proxies after normalisation; a larger scale
            sharpens the softmax. The paper uses unit norm (`scale=1`); public
            re-implementations use 3, which trains faster. Defaults to `3.0`.
        exclude_positive: bool. Leave the true class out of the denominator (the paper's NCA
            form; the loss can then be negative). Defaults to `True`.
        return_count: bool. Also return the int32 number of samples used. Defaults to `False`.

    Returns:
        float32 scalar, or `(loss, num_valid)`; 0.0 when no sample has a valid label.

    Examples:
    >>> proxies = keras.random.normal((10, 8))
    >>> loss = proxy_nca_loss([0, 3, 3, 7], keras.random.normal((4, 8)), proxies)

    References:
        Movshovitz-Attias et al., "No Fuss Distance Metric Learning using Proxies", ICCV 2017,
        Sec. 3-4 (proxy-NCA loss with normalised proxies).
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    proxies = ops.cast(ops.convert_to_tensor(proxies), "float32")
    if len(proxies.shape) != 2:
        raise ValueError(
            f"`proxies` must have shape [num_classes, dim]. Received: {tuple(proxies.shape)}"
        )
    num_classes = proxies.shape[0]
    if num_classes is None:
        raise ValueError("`proxies` needs a static number of classes (first dimension).")
    dims = (proxies.shape[1], embeddings.shape[1])
    if None not in dims and dims[0] != dims[1]:
        raise ValueError(
            "Proxies and embeddings must have the same dimension. Received: "
            f"proxies.shape={tuple(proxies.shape)}, embeddings.shape={tuple(embeddings.shape)}"
        )
    x = scale * l2_normalize(embeddings)
    p = scale * l2_normalize(proxies)
    distances = (
        ops.sum(ops.square(x), axis=1, keepdims=True)
        - 2.0 * ops.matmul(x, ops.transpose(p))
        + ops.expand_dims(ops.sum(ops.square(p), axis=1), 0)
    )
    distances = ops.maximum(distances, 0.0)
    targets = one_hot_in_range(labels, num_classes)  # all-zero rows if out of range
    valid = ops.sum(targets, axis=1) > 0.0
    positive_distance = ops.sum(targets * distances, axis=1)
    logits = -distances
    if exclude_positive:
        logits = ops.where(targets > 0.0, -LARGE_VALUE, logits)
        valid = ops.logical_and(valid, num_classes > 1)
    normalizer = ops.logsumexp(logits, axis=1)
    per_sample = ops.where(valid, positive_distance + normalizer, 0.0)
    loss, _ = masked_mean(per_sample, valid)
    return finish(loss, count_true(valid), return_count, embeddings=embeddings)


@register_loss("proxy_nca")
@keras.saving.register_keras_serializable(package="keras_dml")
class ProxyNCALoss(ArgumentConfig, keras.layers.Layer):
    """Proxy-NCA loss as a layer owning the trainable class proxies `[num_classes, dim]`.

    A `keras.losses.Loss` cannot hold weights, so, like `LearnableMarginLoss`, this loss is a
    layer the model owns: create it in the model's `__init__` (the proxies are created at once
    and appear in `model.trainable_weights`) and call it in `compute_loss` / `train_step`:
    `loss = self.proxy_loss(labels, embeddings)`. Proxies are usually trained with a larger
    learning rate than the network. Proxies are L2-normalised and scaled inside the loss.

    Args:
        num_classes: int. Number of training classes (labels in `[0, num_classes)`).
        embedding_dim: int. Dimension of the embeddings.
        scale: float. Norm of normalised embeddings and proxies. Defaults to `3.0`.
        exclude_positive: bool. Paper's NCA denominator without the true class.
            Defaults to `True`.
        proxy_initializer: initializer of the proxies. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.

    Call arguments:
        labels: int tensor `[B]`. Class labels.
        embeddings: float tensor `[B, embedding_dim]`. Embeddings.
        return_count: bool. Also return the int32 number of samples used. Defaults to `False`.

    Returns:
        float32 scalar loss, or `(loss, num_valid)`.

    Examples:
    >>> proxy_loss = ProxyNCALoss(num_classes=100, embedding_dim=128)
    >>> loss = proxy_loss(labels, embeddings)

    References:
        Movshovitz-Attias et al., "No Fuss Distance Metric Learning using Proxies", ICCV 2017.
    """

    def __init__(
        self,
        num_classes,
        embedding_dim,
        scale=3.0,
        exclude_positive=True,
        proxy_initializer="random_normal",
        **kwargs,
    ):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if int(num_classes) < 2:
            raise ValueError(f"`num_classes` must be >= 2. Received: num_classes={num_classes}")
        if int(embedding_dim) < 1:
            raise ValueError(
                f"`embedding_dim` must be >= 1. Received: embedding_dim={embedding_dim}"
            )
        if scale <= 0:
            raise ValueError(f"`scale` must be > 0. Received: scale={scale}")
        self.num_classes = int(num_classes)
        self.embedding_dim = int(embedding_dim)
        self.scale = float(scale)
        self.exclude_positive = bool(exclude_positive)
        self.proxy_initializer = keras.initializers.get(proxy_initializer)
        # Shapes are known: create the proxies now so they are in the owning model's
        # `trainable_weights` before `fit` builds the optimizer.
        self.build()

    def build(self, labels_shape=None, embeddings_shape=None):
        self.proxies = self.add_weight(
            name="proxies",
            shape=(self.num_classes, self.embedding_dim),
            initializer=self.proxy_initializer,
            dtype="float32",
            trainable=True,
            autocast=False,
        )

    loss_fn = staticmethod(proxy_nca_loss)

    @property
    def class_weight_variable(self):
        """The trainable `[num_classes, embedding_dim]` proxies."""
        return self.proxies

    def loss_arguments(self):
        """Keyword arguments of `loss_fn` besides labels, embeddings and proxies."""
        return {"scale": self.scale, "exclude_positive": self.exclude_positive}

    def call(self, labels, embeddings, return_count=False):
        return proxy_nca_loss(
            labels, embeddings, self.proxies, return_count=return_count, **self.loss_arguments()
        )

    def compute_output_shape(self, labels_shape, embeddings_shape=None):
        return ()
