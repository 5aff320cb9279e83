"""`ModelLoss`: the loss of an `EmbeddingModel`, a compiled Keras loss or a loss layer it owns."""

import keras
from keras import ops

from keras_dml.losses.class_weights import class_loss_with_weights, is_class_loss
from keras_dml.losses.cross_batch_memory import check_memory_count, is_memory_loss
from keras_dml.models.distribution import gather_replicas, with_model_losses


class ModelLoss:
    """The loss methods of `EmbeddingModel` (a mixin placed before `EnsembleModel`)."""

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
            check_memory_count(loss_layer, self.loss_memory_keys, type(self).__name__)
        if self.loss_layer is loss_layer:
            return
        self.loss_slot.held.clear()
        if loss_layer is not None:
            self.loss_slot.held.append(loss_layer)

    def compile(self, optimizer="rmsprop", loss=None, **kwargs):
        """`keras.Model.compile`, where `loss` may also be a loss layer with trainable weights.

        Args:
            optimizer: optimizer instance or name. Defaults to `"rmsprop"`.
            loss: a Keras loss, or a `keras.layers.Layer` loss that the model then owns; `None`
                keeps an owned loss layer. Defaults to `None`.
            **kwargs: passed to `keras.Model.compile`.
        """
        if isinstance(loss, keras.layers.Layer):
            self._set_loss_layer(loss)
            loss = None
        elif loss is not None:
            self._set_loss_layer(None)
        super().compile(optimizer=optimizer, loss=loss, **kwargs)

    def compile_from_config(self, config):
        """Re-compiles a loaded model, so `fit` resumes with the saved optimizer state."""
        # Keras skips this for models that override `compile`; this one only adds loss layers
        # (restored by the model's own config), so the saved arguments replay as they are.
        if type(self).compile is not ModelLoss.compile:
            return super().compile_from_config(config)
        config = deserialize_compile_config(config)
        self.compile(**config)
        if self.built and getattr(self, "optimizer", None) is not None:
            self.optimizer.build(self.trainable_variables)  # so its saved state can load

    def metric_loss(
        self, labels, embeddings, sample_weight=None, class_weights=None, memory=0, update=True
    ):
        """The model's metric loss on `embeddings` (the whole output or one learner's slice).

        Args:
            labels: int tensor `[B]`.
            embeddings: float tensor `[B, d]`.
            sample_weight: optional per-example weights (compiled losses only).
            class_weights: callable `[C, D] -> [C, d]`: the owned class vectors of these columns.
            memory: int or int scalar tensor. The cross-batch memory key. Defaults to `0`.
            update: bool or bool scalar tensor. Whether a memory loss enqueues. Defaults to `True`.

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
        if is_memory_loss(layer):
            return ops.cast(layer(labels, embeddings, memory=memory, update=update), "float32")
        return ops.cast(layer(labels, embeddings), "float32")

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The owned loss layer (or Keras' loss) on the global batch, plus the model's losses."""
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


def deserialize_compile_config(compile_config):
    """Deserializes saved compile arguments, naming backend optimizers by `keras.optimizers`.

    Args:
        compile_config: dict. The saved compile arguments (`Model.get_compile_config()`).

    Returns:
        dict of `compile` keyword arguments.
    """
    config = dict(compile_config or {})
    optimizer = config.get("optimizer")
    # e.g. `keras.src.backend.torch.optimizers.torch_adam`: loading it on TensorFlow needs torch.
    if isinstance(optimizer, dict) and str(optimizer.get("module", "")).startswith(
        "keras.src.backend."
    ):
        config["optimizer"] = {**optimizer, "module": "keras.optimizers"}
    return keras.saving.deserialize_keras_object(config)
