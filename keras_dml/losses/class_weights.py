"""The class-based losses' base layer, input checks and helpers."""

import keras
import numpy as np
from keras import ops

from keras_dml.losses.cross_batch_memory import is_memory_loss
from keras_dml.losses.registry import loss_class
from keras_dml.pairs.distances import l2_normalize, prepare_inputs
from keras_dml.utils.argument_config import ArgumentConfig


def prepare_class_weights(embeddings, class_weights, weights_name="class_weights"):
    """`class_weights` as float32 `[C, D]`, checked against the embeddings; else a `ValueError`."""
    class_weights = ops.cast(ops.convert_to_tensor(class_weights), "float32")
    if len(class_weights.shape) != 2 or class_weights.shape[0] is None:
        raise ValueError(
            f"`{weights_name}` must have shape [num_classes, dim] with a static number of "
            f"classes. Received: {weights_name}.shape={tuple(class_weights.shape)}"
        )
    dims = (class_weights.shape[1], embeddings.shape[1])
    if None not in dims and dims[0] != dims[1]:
        raise ValueError(
            f"`{weights_name}` and embeddings must have the same dimension. Received: "
            f"{weights_name}.shape={tuple(class_weights.shape)}, "
            f"embeddings.shape={tuple(embeddings.shape)}"
        )
    return class_weights


def prepare_class_inputs(labels, embeddings, class_weights, weights_name="class_weights"):
    """`(labels, embeddings, class_weights, invalid)`, checked; `invalid` flags labels outside
    `[0, C)` in a traced graph (an eager call raises a `ValueError`).
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
    class_weights = prepare_class_weights(embeddings, class_weights, weights_name)
    invalid = check_label_range(labels, class_weights.shape[0])
    return labels, embeddings, class_weights, invalid


def check_label_range(labels, num_classes):
    """bool scalar: a label outside `[0, num_classes)`; raises a `ValueError` in an eager call."""
    out_of_range = ops.logical_or(ops.less(labels, 0), ops.greater_equal(labels, num_classes))
    values = _eager_values(labels)
    if values is not None:
        bad = np.unique(values[(values < 0) | (values >= num_classes)])
        if bad.size:
            raise ValueError(
                f"Class-based losses need labels in [0, {num_classes}) (one weight vector per "
                f"class); remap the labels to 0..num_classes-1 or build the loss with a larger "
                f"`num_classes`. Received out-of-range labels: {bad[:10].tolist()}"
            )
    return ops.any(out_of_range)


def _eager_values(tensor):
    """The NumPy values of an eager tensor, or `None` for a symbolic (traced) one."""
    try:
        return np.asarray(ops.convert_to_numpy(tensor))
    except (RuntimeError, TypeError, ValueError):
        return None  # tf.function / jax.jit tracers and KerasTensors have no values


def cosine_logits(embeddings, class_weights):
    """Cosines `[B, C]` between the L2-normalised embeddings and class weights (NaN rows for
    NaN or Inf embeddings)."""
    return ops.matmul(l2_normalize(embeddings), ops.transpose(l2_normalize(class_weights)))


def softmax_cross_entropy(logits, targets):
    """Per-sample cross-entropy `[B]` of logits `[B, C]` against one-hot targets `[B, C]`."""
    return ops.logsumexp(logits, axis=1) - ops.sum(targets * logits, axis=1)


def mean_over_samples(per_sample, invalid):
    """`(loss, num_samples)`: the mean of every per-sample loss (0.0 for an empty batch), NaN
    when `invalid`."""
    per_sample = ops.cast(per_sample, "float32")
    count = ops.cast(ops.shape(per_sample)[0], "float32")
    loss = ops.sum(per_sample) / ops.maximum(count, 1.0)
    return poison_if(loss, invalid), ops.cast(count, "int32")


def poison_if(loss, invalid):
    """`loss`, or NaN where the bool scalar `invalid` is True (out-of-range labels in a graph)."""
    return loss + ops.where(invalid, float("nan"), 0.0)


class ClassVectorLoss(ArgumentConfig, keras.layers.Layer):
    """Base layer of the losses with trainable class vectors: creates, checks and passes them.

    A subclass sets `loss_fn` (a `staticmethod`), `WEIGHTS_NAME`, `LOSS_ARGUMENTS` (its attributes
    passed to `loss_fn`) and, for `K` vectors per class, `VECTORS_PER_CLASS` (the attribute of `K`).

    Args:
        num_classes: int >= 2. Number of training classes.
        embedding_dim: int >= 1. Dimension of the embeddings.
        initializer: initializer of the class vectors.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.
    """

    WEIGHTS_NAME = "class_weights"
    LOSS_ARGUMENTS = ()
    VECTORS_PER_CLASS = None
    loss_fn = None

    def __init__(self, num_classes, embedding_dim, initializer, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if num_classes is None or embedding_dim is None:
            raise ValueError(
                f"{type(self).__name__} holds one weight vector per class, so it needs the number "
                "of training classes and the embedding size: pass num_classes=... and "
                "embedding_dim=... (e.g. keras_dml.losses.get(name, num_classes=100, "
                f"embedding_dim=128)). Received: num_classes={num_classes}, "
                f"embedding_dim={embedding_dim}"
            )
        if int(num_classes) < 2:
            raise ValueError(f"`num_classes` must be >= 2. Received: num_classes={num_classes}")
        if int(embedding_dim) < 1:
            raise ValueError(
                f"`embedding_dim` must be >= 1. Received: embedding_dim={embedding_dim}"
            )
        self.num_classes = int(num_classes)
        self.embedding_dim = int(embedding_dim)
        self._vector_initializer = keras.initializers.get(initializer)
        # Created now, so an owning model lists them before `fit` builds the optimizer.
        self.build()

    def build(self, labels_shape=None, embeddings_shape=None):
        per_class = 1 if self.VECTORS_PER_CLASS is None else getattr(self, self.VECTORS_PER_CLASS)
        variable = self.add_weight(
            name=self.WEIGHTS_NAME,
            shape=(self.num_classes * per_class, self.embedding_dim),
            initializer=self._vector_initializer,
            dtype="float32",
            trainable=True,
            autocast=False,
        )
        setattr(self, self.WEIGHTS_NAME, variable)

    @property
    def class_weight_variable(self):
        """The trainable `[num_classes * K, embedding_dim]` variable of the class vectors."""
        return getattr(self, self.WEIGHTS_NAME)

    def loss_arguments(self):
        """Keyword arguments of `loss_fn` besides labels, embeddings and weights."""
        return {name: getattr(self, name) for name in self.LOSS_ARGUMENTS}

    def call(self, labels, embeddings, return_count=False):
        return self.loss_fn(
            labels,
            embeddings,
            self.class_weight_variable,
            return_count=return_count,
            **self.loss_arguments(),
        )

    def compute_output_shape(self, labels_shape, embeddings_shape=None):
        return ()


class ClassWeightLoss(ClassVectorLoss):
    """Base layer of the class-based losses built from a run configuration's sizes.

    Args:
        num_classes: int. Number of training classes; `None` raises, saying what to pass.
        embedding_dim: int. Dimension of the embeddings.
        weights_initializer: initializer of the class weights. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.
    """

    def __init__(
        self, num_classes=None, embedding_dim=None, weights_initializer="random_normal", **kwargs
    ):
        self.weights_initializer = keras.initializers.get(weights_initializer)
        super().__init__(num_classes, embedding_dim, self.weights_initializer, **kwargs)


def is_class_loss(loss):
    """Whether `loss` (an instance, a class, a registered name or a `{"name": ...}` dict)
    compares embeddings with trainable per-class vectors."""
    if isinstance(loss, dict):
        loss = loss.get("name")
    if isinstance(loss, str):
        loss = loss_class(loss)
    cls = loss if isinstance(loss, type) else type(loss)
    return hasattr(cls, "loss_fn") and hasattr(cls, "class_weight_variable")


def with_class_arguments(loss_config, num_classes=None, embedding_dim=None):
    """`loss_config` with `num_classes` / `embedding_dim` filled in where unset and needed.

    Examples:
    >>> with_class_arguments({"name": "proxy_anchor"}, num_classes=10, embedding_dim=64)
    {'name': 'proxy_anchor', 'num_classes': 10, 'embedding_dim': 64}
    """
    if loss_config and is_memory_loss(loss_config):
        filled = dict(loss_config)
        if embedding_dim is not None and filled.get("embedding_dim") is None:
            filled["embedding_dim"] = int(embedding_dim)
        return filled
    if not loss_config or not is_class_loss(loss_config):
        return loss_config
    filled = dict(loss_config)
    for key, value in (("num_classes", num_classes), ("embedding_dim", embedding_dim)):
        if value is not None and filled.get(key) is None:
            filled[key] = int(value)
    return filled


def with_recommended_lr_multipliers(optimizer_config, loss_config):
    """`optimizer_config` with the loss class's `recommended_lr_multipliers` when it sets none.

    Examples:
    >>> with_recommended_lr_multipliers({"name": "adam"}, {"name": "proxy_anchor"})
    {'name': 'adam', 'lr_multipliers': {'proxies$': 100.0}}
    """
    if not loss_config or "lr_multipliers" in optimizer_config:
        return optimizer_config
    recommended = getattr(
        loss_class(loss_config.get("name", "")), "recommended_lr_multipliers", None
    )
    if not recommended:
        return optimizer_config
    return {**optimizer_config, "lr_multipliers": dict(recommended)}


def class_loss_with_weights(loss, labels, embeddings, class_weights):
    """A class-based loss layer's float32 value with other class vectors `[C, d]` than its own."""
    return loss.loss_fn(labels, embeddings, class_weights, **loss.loss_arguments())
