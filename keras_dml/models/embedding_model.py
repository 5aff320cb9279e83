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

    With one learner this is the single-embedding baseline. The output `[N, sum(learner_dims)]` is
    the concatenation of the normalised learner embeddings (docs/methods/baseline.md).

    Args:
        backbone: `keras.Model`. Functional model from raw pixels in [0, 255] to a 4-D feature map
            (`keras_dml.backbones.get`).
        embedding_dim: int. Total size, split over the learners as evenly as it goes
            (`resolve_learner_dims`). Defaults to `128`.
        num_learners: int. Number of learners. Defaults to `1`.
        learner_dims: tuple of int. Per-learner sizes; override the two above. Defaults to `None`.
        learner_weights: tuple of float. Fixed multipliers of the normalised learner embeddings.
            Defaults to `None` (all ones).
        pooling: str. `"avg"`, `"max"` or `"avgmax"` (their sum). Defaults to `"avg"`.
        dropout: float. Dropout rate on the pooled features. Defaults to `0.0`.
        loss_layer: `keras.layers.Layer` or its config. A loss with trainable weights for the model
            to own, as `compile(loss=layer)` does. Defaults to `None`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.EmbeddingModel(backbone, embedding_dim=64)
    >>> proxies = keras_dml.losses.get("proxy_anchor", num_classes=100, embedding_dim=64)
    >>> model.compile(optimizer="adam", loss=proxies)  # the model now owns the proxies

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019
        (separately normalised learner slices, concatenated).
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
