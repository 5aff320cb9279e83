"""`EmbeddingModel`: the single-embedding baseline, base of the head-per-learner ensembles."""

import keras

from keras_dml.models.ensemble_model import (  # noqa: F401 (re-exported)
    POOLINGS,
    EnsembleModel,
    LossLayerSlot,
    check_backbone,
)
from keras_dml.models.learner_dims import resolve_learner_dims
from keras_dml.models.model_loss import ModelLoss
from keras_dml.pairs.distances import l2_normalize  # noqa: F401 (re-exported)

__all__ = [
    "POOLINGS",
    "EmbeddingModel",
    "EnsembleModel",
    "LossLayerSlot",
    "check_backbone",
    "l2_normalize",
    "resolve_learner_dims",
]


@keras.saving.register_keras_serializable(package="keras_dml")
class EmbeddingModel(ModelLoss, EnsembleModel):
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
        embedding_dim: int. Total embedding size. Split over `num_learners` as evenly as it
            goes (128 over 3: 43, 43, 42; `resolve_learner_dims`) unless `learner_dims` is
            given. Defaults to `128`.
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
