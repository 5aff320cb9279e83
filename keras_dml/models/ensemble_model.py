"""`EnsembleModel`: the base of every keras-dml model (backbone, learners, one embedding)."""

import warnings

import keras
import numpy as np
from keras import ops

from keras_dml.models.random_state import SeedStateSaving
from keras_dml.pairs.distances import l2_normalize
from keras_dml.serving.input_contract import (
    check_image_tensor,
    looks_unit_scaled,
    nan_rows_for_invalid_images,
    unit_scale_message,
)

POOLINGS = ("avg", "max", "avgmax")


class EnsembleModel(SeedStateSaving, keras.Model):
    """The base of every keras-dml model: a backbone, learners, one concatenated embedding.

    Subclasses implement `raw_learner_embeddings(images, training)`. Not registered itself.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        learner_dims: tuple of int. Size of each learner's embedding.
        learner_weights: tuple of float. Fixed multipliers of the normalised learner embeddings.
            Defaults to `None` (all ones).
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout rate on the pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model` (e.g. `name`).
    """

    def __init__(
        self, backbone, learner_dims, learner_weights=None, pooling="avg", dropout=0.0, **kwargs
    ):
        if learner_weights is not None:
            learner_weights = tuple(float(w) for w in learner_weights)
            if len(learner_weights) != len(learner_dims):
                raise ValueError(
                    "`learner_weights` needs one weight per learner "
                    f"({len(learner_dims)}). Received: learner_weights={learner_weights}"
                )
        if pooling not in POOLINGS:
            raise ValueError(f"`pooling` must be one of {POOLINGS}. Received: pooling={pooling!r}")
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1). Received: dropout={dropout}")
        check_backbone(backbone)
        super().__init__(**kwargs)
        self.backbone = backbone
        self.learner_dims = tuple(learner_dims)
        self.learner_weights = learner_weights
        self.embedding_dim = sum(self.learner_dims)
        self.num_learners = len(self.learner_dims)
        self.pooling = pooling
        self.dropout = float(dropout)
        self.dropout_layer = keras.layers.Dropout(self.dropout, name="feature_dropout")
        # A loss layer (class proxies, learnable margins) arrives after the model is built
        # (models build at the end of `__init__`), and Keras locks a built layer's state: no
        # sublayer can be added then. The slot is a sublayer created now and never built, so it
        # stays open; the loss layer it holds is tracked as part of the model (weights, files).
        self.loss_slot = LossLayerSlot(name="loss_slot")

    def compile(self, *args, **kwargs):
        """`keras.Model.compile`; the model also tracks its loss's random generators."""
        super().compile(*args, **kwargs)
        # JAX reads a generator the model does not track as a constant: every step would draw
        # the same samples.
        self.loss_slot.hold_seed_generators(getattr(self, "loss", None))

    @property
    def loss_memory_keys(self):
        """Number of loss call sites, each with its own cross-batch memory (1: the whole output)."""
        return 1

    @property
    def loss_layer(self):
        """The loss layer this model owns (e.g. from `compile(loss=layer)`), or `None`."""
        return self.loss_slot.held[0] if self.loss_slot.held else None

    @property
    def feature_dim(self):
        """Size of the pooled backbone features."""
        return int(self.backbone.outputs[0].shape[-1])

    @property
    def image_shape(self):
        """The (H, W, C) input shape the model was built for."""
        return tuple(self.backbone.inputs[0].shape[1:])

    def pool(self, feature_map):
        """Global pooling of a `[N, H, W, C]` map to `[N, C]`."""
        if self.pooling == "avg":
            return ops.mean(feature_map, axis=(1, 2))
        if self.pooling == "max":
            return ops.max(feature_map, axis=(1, 2))
        return ops.mean(feature_map, axis=(1, 2)) + ops.max(feature_map, axis=(1, 2))

    def features(self, images, training=False):
        """Pooled backbone features `[N, feature_dim]` (what D&C's reference code clusters)."""
        return self.pool(self.backbone(images, training=training))

    def raw_learner_embeddings(self, images, training=False):
        """Per-learner outputs before normalisation (implemented by subclasses)."""
        raise NotImplementedError(f"{type(self).__name__} must implement raw_learner_embeddings.")

    def learner_embeddings(self, images, training=False):
        """Per-learner L2-normalised embeddings: a list of `[N, d_k]` tensors."""
        return [l2_normalize(e) for e in self.raw_learner_embeddings(images, training=training)]

    def combine(self, learner_embeddings):
        """Concatenates normalised learner embeddings, applying `learner_weights` if set."""
        if self.learner_weights is not None:
            learner_embeddings = [
                e * weight for e, weight in zip(learner_embeddings, self.learner_weights)
            ]
        if len(learner_embeddings) == 1:
            return learner_embeddings[0]
        return ops.concatenate(learner_embeddings, axis=-1)

    def __call__(self, *args, **kwargs):
        images = args[0] if args else kwargs.get("images")
        if _is_empty_batch(images):  # TensorFlow's convolutions fail on an empty batch
            self.checked_images(images)
            return ops.zeros((0, self.embedding_dim), "float32")
        return super().__call__(*args, **kwargs)

    def call(self, images, training=False):
        images = self.checked_images(images)
        embeddings = self.combine(self.learner_embeddings(images, training=training))
        return self.served(images, embeddings, training)

    def predict(self, x, *args, **kwargs):
        """`keras.Model.predict`; on arrays, the input contract's static checks run first.

        An empty batch gives an empty `[0, D]` result; float pixels in [0, 1] are warned about.
        """
        # Before Keras starts: JAX's `predict` loses the weights when tracing `call` raises.
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            check_image_tensor(x, self.image_shape)
            if _is_empty_batch(x):
                return np.zeros((0, self.embedding_dim), np.float32)
            if isinstance(x, np.ndarray) and looks_unit_scaled(float(np.max(x)), x.dtype):
                warnings.warn(unit_scale_message(float(np.min(x)), float(np.max(x))), stacklevel=2)
        return super().predict(x, *args, **kwargs)

    def predict_on_batch(self, x):
        """`keras.Model.predict_on_batch`; an empty batch gives an empty `[0, D]` result."""
        if _is_empty_batch(x):
            check_image_tensor(x, self.image_shape)
            return np.zeros((0, self.embedding_dim), np.float32)
        return super().predict_on_batch(x)

    def checked_images(self, images):
        """`images`, once their static shape and dtype fit `image_shape` (refused otherwise)."""
        return check_image_tensor(images, self.image_shape)

    def served(self, images, embeddings, training=False):
        """`embeddings` with NaN rows for NaN / Inf images and, in inference, out-of-range ones."""
        return nan_rows_for_invalid_images(images, embeddings, pixel_range=not training)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.embedding_dim)

    def learner_slices(self):
        """`(start, stop)` column ranges of each learner inside the output embedding."""
        bounds, start = [], 0
        for dim in self.learner_dims:
            bounds.append((start, start + dim))
            start += dim
        return bounds

    def split_output(self, embeddings):
        """Splits a model output `[N, D]` into the learner embeddings `[N, d_k]`."""
        return [embeddings[:, start:stop] for start, stop in self.learner_slices()]

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        return cls(**config)


def _is_empty_batch(images):
    """Whether `images` is a batch whose static size is 0 (`[0, H, W, C]`)."""
    shape = getattr(images, "shape", None)
    # Plain ints only: comparing torch.export's symbolic batch size would fix it in the graph.
    return shape is not None and len(shape) > 0 and isinstance(shape[0], int) and shape[0] == 0


def check_backbone(backbone):
    """Raises a `ValueError` unless `backbone` is a functional model with one 4-D output."""
    if not isinstance(backbone, keras.Model) or len(backbone.outputs or []) != 1:
        raise ValueError(
            "`backbone` must be a functional keras.Model with one 4-D output, e.g. "
            f"keras_dml.backbones.get('convnet'). Received: backbone={backbone!r}"
        )
    if len(backbone.outputs[0].shape) != 4:
        raise ValueError(
            "`backbone` must output a 4-D feature map [N, H, W, C] (no pooling). "
            f"Received output shape {backbone.outputs[0].shape}."
        )


class LossLayerSlot(keras.layers.Layer):
    """A weightless sublayer that holds the model's loss layer and its loss's seed generators.

    Marked built without running `build`, so a loss layer can still be attached to a built model.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.held = []
        self.seed_generators = []
        self.built = True  # nothing to build; `build` is never run, so the state stays open

    def hold_seed_generators(self, loss):
        """Tracks the `SeedGenerator`s of `loss`, what `keras.Model.compile` received."""
        found = []
        for item in keras.tree.flatten(loss) if loss is not None else []:
            for value in getattr(item, "__dict__", {}).values():
                if isinstance(value, keras.random.SeedGenerator) and value not in found:
                    found.append(value)
        self.seed_generators.clear()
        self.seed_generators.extend(found)
