"""Shared parts of the class-based losses (one trainable weight vector or proxy per class).

Normalised softmax, ProxyAnchor, ArcFace and CosFace compare each embedding with `[C, D]` class
vectors. Unlike the in-batch pair losses they cannot ignore a sample whose label has no class
vector: such a label is a bug in the data or in `num_classes`, so it raises a `ValueError` when the
labels can be read (eager calls), and turns the loss into NaN inside a traced graph (`fit`,
`tf.function`), where no Python error can be raised. NaN or Inf in the embeddings also give a NaN
loss, never a finite loss over NaN gradients.
"""

import keras
import numpy as np
from keras import ops

from keras_dml.losses.cross_batch_memory import is_memory_loss
from keras_dml.losses.registry import loss_class
from keras_dml.pairs.distances import l2_normalize, prepare_inputs
from keras_dml.utils.argument_config import ArgumentConfig


def prepare_class_inputs(labels, embeddings, class_weights, weights_name="class_weights"):
    """Standardises `(labels, embeddings, class_weights)` and checks their shapes and labels.

    Args:
        labels: int tensor with `B` elements. Class ids in `[0, C)`.
        embeddings: float tensor `[B, D]`.
        class_weights: float tensor `[C, D]`: one weight vector (or proxy) per class.
        weights_name: str. Name of the class-weight argument in error messages.
            Defaults to `"class_weights"`.

    Returns:
        Tuple `(labels, embeddings, class_weights, invalid)`: int32 `[B]`, float32 `[B, D]`,
        float32 `[C, D]`, and a bool scalar tensor that is True when a label lies outside
        `[0, C)` (only possible in a traced graph; eager calls raise instead).

    Raises:
        ValueError: for a non-2-D weight matrix, mismatched dimensions, or (eagerly) labels
            outside `[0, C)`.
    """
    labels, embeddings = prepare_inputs(labels, embeddings)
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
    invalid = check_label_range(labels, class_weights.shape[0])
    return labels, embeddings, class_weights, invalid


def check_label_range(labels, num_classes):
    """Checks that every label is a class id in `[0, num_classes)`.

    Args:
        labels: int32 tensor `[B]`.
        num_classes: int. Number of classes.

    Returns:
        bool scalar tensor: True when some label is out of range. Eagerly that never happens
        (it raises); in a traced graph the caller turns the loss into NaN.

    Raises:
        ValueError: when the labels have values (eager call) and one is out of range.
    """
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
        # tf.function / jax.jit tracers and KerasTensors have no values: checked in-graph.
        return None


def cosine_logits(embeddings, class_weights):
    """Cosine similarities `[B, C]` between L2-normalised embeddings and class weights.

    A NaN or Inf embedding gives a NaN row (`inf * 0` in the normalisation), so the loss built on
    it is NaN as well.
    """
    return ops.matmul(l2_normalize(embeddings), ops.transpose(l2_normalize(class_weights)))


def mean_over_samples(per_sample, invalid):
    """Mean of the per-sample losses (0.0 for an empty batch); NaN when `invalid` is True.

    Every sample is counted: NaN in any per-sample loss propagates to the result.

    Returns:
        Tuple `(loss, num_samples)`: float32 scalar and int32 scalar.
    """
    per_sample = ops.cast(per_sample, "float32")
    count = ops.cast(ops.shape(per_sample)[0], "float32")
    loss = ops.sum(per_sample) / ops.maximum(count, 1.0)
    return poison_if(loss, invalid), ops.cast(count, "int32")


def poison_if(loss, invalid):
    """`loss`, or NaN where the bool scalar `invalid` is True (out-of-range labels in a graph)."""
    return loss + ops.where(invalid, float("nan"), 0.0)


class ClassWeightLoss(ArgumentConfig, keras.layers.Layer):
    """Base layer of the class-based losses: owns the trainable `[num_classes, dim]` weights.

    A `keras.losses.Loss` cannot hold weights, so these losses are layers that a model owns
    (`EmbeddingModel.compile(loss=layer)` attaches one; see `keras_dml.models.EmbeddingModel`).
    The weights are created in `__init__`, so they exist before an optimizer is built.
    Subclasses set `WEIGHTS_NAME` (the attribute and variable name of the weights), `loss_fn`
    (the pure function as a `staticmethod`, called as `loss_fn(labels, embeddings, weights,
    return_count=..., **self.loss_arguments())`) and `LOSS_ARGUMENTS` (names of the attributes
    passed to `loss_fn`). `ArgumentConfig` serialises the constructor's arguments.

    Args:
        num_classes: int. Number of training classes; labels must be in `[0, num_classes)`.
            Required (the default `None` raises a `ValueError` saying so).
        embedding_dim: int. Dimension of the embeddings. Required.
        weights_initializer: initializer of the class weights. Defaults to `"random_normal"`.
        **kwargs: base `keras.layers.Layer` arguments; `dtype` defaults to `"float32"`.
    """

    WEIGHTS_NAME = "class_weights"
    LOSS_ARGUMENTS = ()

    def __init__(
        self, num_classes=None, embedding_dim=None, weights_initializer="random_normal", **kwargs
    ):
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
        self.weights_initializer = keras.initializers.get(weights_initializer)
        # Shapes are known: create the weights now so an owning model lists them in
        # `trainable_weights` before `fit` builds the optimizer.
        self.build()

    def build(self, labels_shape=None, embeddings_shape=None):
        variable = self.add_weight(
            name=self.WEIGHTS_NAME,
            shape=(self.num_classes, self.embedding_dim),
            initializer=self.weights_initializer,
            dtype="float32",
            trainable=True,
            autocast=False,
        )
        setattr(self, self.WEIGHTS_NAME, variable)

    @property
    def class_weight_variable(self):
        """The trainable `[num_classes, embedding_dim]` variable (proxies or class weights)."""
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


def is_class_loss(loss):
    """Whether `loss` compares embeddings with trainable per-class vectors (proxies, weights).

    Such a loss needs `num_classes` and `embedding_dim` to be built, and an ensemble can give each
    learner its own class vectors by slicing the columns of one `[C, D]` matrix.

    Args:
        loss: a loss instance, a registered name or a `{"name": ...}` config dict.

    Returns:
        bool.
    """
    if isinstance(loss, dict):
        loss = loss.get("name")
    if isinstance(loss, str):
        loss = loss_class(loss)
    cls = loss if isinstance(loss, type) else type(loss)
    return hasattr(cls, "loss_fn") and hasattr(cls, "class_weight_variable")


def with_class_arguments(loss_config, num_classes=None, embedding_dim=None):
    """`loss_config` with `num_classes` / `embedding_dim` filled in for a class-based loss.

    Values already in the config are kept (and checked by the loss itself); other losses are
    returned unchanged.

    Args:
        loss_config: dict `{"name": ..., **arguments}` or `None`.
        num_classes: int or `None`. Number of training classes.
        embedding_dim: int or `None`. Size of the embeddings the loss will receive.

    Returns:
        A new dict (or `None`).

    Examples:
    >>> with_class_arguments({"name": "proxy_anchor"}, num_classes=10, embedding_dim=64)
    {'name': 'proxy_anchor', 'num_classes': 10, 'embedding_dim': 64}
    """
    if loss_config and is_memory_loss(loss_config):
        # Cross-batch memory stores embeddings of the model's width; it has no classes.
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
    """`optimizer_config` with the loss's recommended `lr_multipliers` when it sets none.

    A loss class may declare `recommended_lr_multipliers` (`{pattern: factor}` over variable
    paths): ProxyAnchor's proxies train at 100x the network's learning rate in Kim et al.
    (2020)'s code, which PML's documentation and the paper's results assume. An optimizer entry
    that already has `lr_multipliers` (even `{}`) is kept as it is.

    Args:
        optimizer_config: dict. The run configuration's `optimizer` entry.
        loss_config: dict `{"name": ..., **arguments}` or `None`.

    Returns:
        A new dict (or `optimizer_config` unchanged).

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
    """Evaluates a class-based loss layer with other class vectors than its own variable.

    Ensembles give learner k the columns of its embedding slice (`W[:, a:b]`) or the masked
    vectors of its subspace, so each learner has its own class vectors inside one `[C, D]`
    variable the model owns.

    Args:
        loss: a class-based loss layer (`is_class_loss(loss)`).
        labels: int tensor `[B]`.
        embeddings: float tensor `[B, d]`.
        class_weights: float tensor `[C, d]`, usually derived from `loss.class_weight_variable`.

    Returns:
        float32 scalar loss.
    """
    return loss.loss_fn(labels, embeddings, class_weights, **loss.loss_arguments())
