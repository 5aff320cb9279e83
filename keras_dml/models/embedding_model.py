"""`EmbeddingModel`: the single-embedding baseline, base of the head-per-learner ensembles."""

import keras
from keras import ops

from keras_dml.losses.class_weights import class_loss_with_weights, is_class_loss
from keras_dml.losses.pairwise import l2_normalize  # noqa: F401 (re-exported)
from keras_dml.models.distribution import gather_replicas, with_model_losses
from keras_dml.models.ensemble_model import (  # noqa: F401 (re-exported)
    POOLINGS,
    EnsembleModel,
    LossLayerSlot,
    check_backbone,
)


@keras.saving.register_keras_serializable(package="keras_dml")
class EmbeddingModel(EnsembleModel):
    """Backbone, global pooling, one linear head per learner, per-learner L2 normalisation.

    The model takes raw pixels in [0, 255] (the backbone carries its own normalisation), so
    `predict`, a `.keras` file and an exported graph all see the same input. Its output is a single
    tensor `[N, sum(learner_dims)]`: the concatenation of the per-learner L2-normalised embeddings,
    each optionally multiplied by a fixed `learner_weights` entry (BIER boosting weights, so that a
    dot product of two outputs is the ensemble similarity).

    With one learner (the default) this is the single-embedding baseline every ensemble method is
    compared with. Ensemble methods subclass it: each learner owns its own `Dense` head, so an
    optimizer step can update one learner without touching the others' weights or optimizer state.
    The model builds itself at the end of `__init__` (so it is ready to train, save and export);
    a subclass creates its extra layers and variables in `build` before calling `super().build`.

    Args:
        backbone: `keras.Model`. A functional model from raw pixels to a 4-D feature map, as
            returned by `keras_dml.backbones.get`.
        embedding_dim: int. Total embedding size. Split evenly over `num_learners` unless
            `learner_dims` is given. Defaults to `128`.
        num_learners: int. Number of learners (embedding slices). Defaults to `1`.
        learner_dims: tuple of int. Explicit per-learner sizes; overrides `embedding_dim` and
            `num_learners`. Defaults to `None`.
        learner_weights: tuple of float. Fixed multipliers applied to each normalised learner
            embedding in the output. Defaults to `None` (all ones).
        pooling: str. Global pooling of the backbone features: `"avg"`, `"max"` or `"avgmax"`
            (sum of both, as in several DML codebases). Defaults to `"avg"`.
        dropout: float. Dropout rate on pooled features before the heads. Defaults to `0.0`.
        loss_layer: optional `keras.layers.Layer` loss with trainable weights (e.g.
            `keras_dml.losses.ProxyAnchorLoss`) for the model to own, as
            `compile(loss=loss_layer)` does, or its serialized config. Used by `from_config`;
            usually left `None`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Losses with trainable weights (class proxies, classifier weights, learnable margins) are
    layers, not `keras.losses.Loss` objects. `compile(loss=layer)` makes the model own such a
    layer: it becomes a tracked sublayer (its weights are in `trainable_variables`, trained by
    `fit`, stored in `.keras` files and restored by `keras.saving.load_model`), `compute_loss`
    calls `layer(labels, embeddings)`, and since `call` never reads its weights, SavedModel and
    ONNX exports leave them out. A plain `keras.losses.Loss` goes to Keras as usual. A loss layer
    with an `embedding_dim` must match the model's `embedding_dim`; `sample_weight` is not
    supported with a loss layer.

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.EmbeddingModel(backbone, embedding_dim=64)
    >>> model.compile(optimizer="adam", loss=keras_dml.losses.TripletLoss())
    >>> # model.fit(train_ds, epochs=10)
    >>> proxies = keras_dml.losses.get("proxy_anchor", num_classes=100, embedding_dim=64)
    >>> model.compile(optimizer="adam", loss=proxies)  # the model now owns the proxies

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019
        (the evaluation vector is the concatenation of separately normalised learner slices).
    """

    def __init__(
        self,
        backbone,
        embedding_dim=128,
        num_learners=1,
        learner_dims=None,
        learner_weights=None,
        pooling="avg",
        dropout=0.0,
        loss_layer=None,
        **kwargs,
    ):
        super().__init__(
            backbone,
            resolve_learner_dims(embedding_dim, num_learners, learner_dims),
            learner_weights=learner_weights,
            pooling=pooling,
            dropout=dropout,
            **kwargs,
        )
        # float32 heads under a mixed-precision policy: the embedding is the model's output,
        # compared by dot products finer than float16's resolution (the backbone may run in 16
        # bits; a head is one small matmul).
        self.heads = [
            keras.layers.Dense(dim, dtype="float32", name=f"learner_{k}_head")
            for k, dim in enumerate(self.learner_dims)
        ]
        if isinstance(loss_layer, dict):  # a serialized layer, from `get_config`
            loss_layer = keras.saving.deserialize_keras_object(loss_layer)
        if loss_layer is not None:
            self._set_loss_layer(loss_layer)
        self.build(backbone.inputs[0].shape)

    # -- building -------------------------------------------------------------------------------
    def build(self, input_shape):
        for head in self.heads:
            head.build((None, self.feature_dim))
        self.built = True

    # -- forward --------------------------------------------------------------------------------
    def raw_learner_embeddings(self, images, training=False):
        """Per-learner head outputs before normalisation: a list of `[N, d_k]` tensors."""
        features = self.dropout_layer(self.features(images, training=training), training=training)
        return [head(features) for head in self.heads]

    # -- losses with trainable weights ----------------------------------------------------------
    def _set_loss_layer(self, loss_layer):
        """Makes `loss_layer` the model's loss layer (`None` removes the current one)."""
        if loss_layer is not None:
            dim = getattr(loss_layer, "embedding_dim", None)
            if dim is not None and int(dim) != self.embedding_dim:
                raise ValueError(
                    f"The loss layer '{loss_layer.name}' expects embeddings of dimension {dim} "
                    f"but this model outputs {self.embedding_dim}; build the loss with "
                    f"embedding_dim={self.embedding_dim}. Received: loss={loss_layer!r}"
                )
        if self.loss_layer is loss_layer:
            return
        self.loss_slot.held.clear()
        if loss_layer is not None:
            self.loss_slot.held.append(loss_layer)

    def compile(self, optimizer="rmsprop", loss=None, **kwargs):
        """`keras.Model.compile`, where `loss` may also be a loss layer with trainable weights.

        Args:
            optimizer: optimizer instance or name. Defaults to `"rmsprop"` (Keras' default).
            loss: a `keras.losses.Loss` (or any loss Keras accepts), or a `keras.layers.Layer`
                loss such as `keras_dml.losses.get("proxy_anchor", num_classes=...,
                embedding_dim=...)`, which the model then owns (see the class docstring).
                `None` keeps a loss layer the model already owns. Defaults to `None`.
            **kwargs: passed to `keras.Model.compile`.
        """
        if isinstance(loss, keras.layers.Layer):
            self._set_loss_layer(loss)
            loss = None
        elif loss is not None:
            self._set_loss_layer(None)
        super().compile(optimizer=optimizer, loss=loss, **kwargs)

    def compile_from_config(self, config):
        """Re-compiles a loaded model, so `fit` resumes with the saved optimizer state.

        Keras skips this for models that override `compile`; `EmbeddingModel.compile` only adds
        loss layers (which the model's own config restores), so its saved compile arguments
        replay as they are. Subclasses with their own `compile` keep Keras' behaviour.
        """
        if type(self).compile is not EmbeddingModel.compile:
            return super().compile_from_config(config)
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)
        if self.built and getattr(self, "optimizer", None) is not None:
            self.optimizer.build(self.trainable_variables)  # so its saved state can load

    def metric_loss(self, labels, embeddings, sample_weight=None, class_weights=None):
        """The model's metric loss on `embeddings` (the whole output or one learner's part).

        With a compiled `keras.losses.Loss` this is that loss. With an owned loss layer whose
        class vectors are a `[C, D]` variable (proxies, class weights), `class_weights` maps that
        variable to the vectors of the embeddings given: an ensemble passes the columns of a
        learner's slice (`lambda w: w[:, a:b]`), so every learner has its own class vectors.

        Args:
            labels: int tensor `[B]`.
            embeddings: float tensor `[B, d]`.
            sample_weight: optional per-example weights (compiled losses only).
            class_weights: callable `[C, D] -> [C, d]` or `None` (the variable as it is).

        Returns:
            float32 scalar.
        """
        layer = self.loss_layer
        if layer is None:
            if self.loss is None:
                raise ValueError(
                    f"{type(self).__name__} has no metric loss: compile it with one, e.g. "
                    "model.compile(optimizer='adam', loss=keras_dml.losses.MarginLoss())."
                )
            return ops.cast(self.loss(labels, embeddings, sample_weight), "float32")
        if class_weights is not None and is_class_loss(layer):
            weights = class_weights(ops.cast(layer.class_weight_variable, "float32"))
            return ops.cast(class_loss_with_weights(layer, labels, embeddings, weights), "float32")
        return ops.cast(layer(labels, embeddings), "float32")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The owned loss layer on `(labels, embeddings)` plus added losses, or Keras' loss.

        In-batch metric losses compare every pair of the batch; with R replicas of a
        `tf.distribute` strategy each replica gathers the labels and embeddings of all
        (`keras_dml.models.distribution`), so the loss equals one device's on the same global
        batch. One device without a loss layer: `keras.Model.compute_loss`.
        """
        loss_layer = self.loss_layer
        if loss_layer is None:
            replicas, (y_all, y_pred_all, weights) = gather_replicas(y, y_pred, sample_weight)
            if replicas == 1 or self.loss is None:
                return super().compute_loss(
                    x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=training
                )
            loss = keras.losses.get(self.loss)(y_all, y_pred_all, weights)
            return with_model_losses(self, loss, replicas)
        if sample_weight is not None:
            raise ValueError(
                f"The loss layer '{loss_layer.name}' takes no per-sample weights; fit without "
                "`sample_weight` / `class_weight` (or compile with a keras.losses.Loss)."
            )
        dim = getattr(loss_layer, "embedding_dim", None)
        if dim is not None and y_pred.shape[-1] is not None and int(y_pred.shape[-1]) != dim:
            raise ValueError(
                f"The loss layer '{loss_layer.name}' was built for embedding_dim={dim} but "
                f"received embeddings of dimension {y_pred.shape[-1]} (a single learner's "
                "slice?). Train this model with a loss that takes any dimension. "
                f"Received: y_pred.shape={tuple(y_pred.shape)}"
            )
        # Under tf.distribute: the loss of the global batch (a proxy loss is not a mean of
        # per-replica losses), plus the regularisers and `add_loss` terms Keras would add.
        replicas, (labels, embeddings) = gather_replicas(y, y_pred)
        return with_model_losses(self, loss_layer(labels, embeddings), replicas)

    # -- serialization --------------------------------------------------------------------------
    def get_config(self):
        config = {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "embedding_dim": self.embedding_dim,
            "num_learners": self.num_learners,
            "learner_dims": list(self.learner_dims),
            "learner_weights": None if self.learner_weights is None else list(self.learner_weights),
            "pooling": self.pooling,
            "dropout": self.dropout,
        }
        if self.loss_layer is not None:
            # The loss layer's weights are part of the saved model, so it is rebuilt with it.
            config["loss_layer"] = keras.saving.serialize_keras_object(self.loss_layer)
        return config


def resolve_learner_dims(embedding_dim, num_learners, learner_dims=None):
    """Returns the per-learner embedding sizes as a tuple, checking the arguments.

    Args:
        embedding_dim: int. Total size, split evenly when `learner_dims` is `None`.
        num_learners: int. Number of learners.
        learner_dims: sequence of int or `None`. Explicit sizes.

    Returns:
        tuple of int, one size per learner.
    """
    if learner_dims is not None:
        learner_dims = tuple(int(d) for d in learner_dims)
        if not learner_dims or min(learner_dims) < 1:
            raise ValueError(
                f"`learner_dims` must be positive sizes. Received: learner_dims={learner_dims}"
            )
        return learner_dims
    if int(num_learners) < 1:
        raise ValueError(f"`num_learners` must be >= 1. Received: num_learners={num_learners}")
    if int(embedding_dim) % int(num_learners) != 0:
        raise ValueError(
            "`embedding_dim` must be divisible by `num_learners` (or pass `learner_dims`). "
            f"Received: embedding_dim={embedding_dim}, num_learners={num_learners}"
        )
    return (int(embedding_dim) // int(num_learners),) * int(num_learners)
