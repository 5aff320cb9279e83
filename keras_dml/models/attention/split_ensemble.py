"""Shared training logic of ABE and M-heads: per-learner metric loss + divergence (Eq. 8)."""

import keras
from keras import ops

from keras_dml import losses
from keras_dml.losses.class_weights import class_loss_with_weights
from keras_dml.models.attention.objective import (
    DIVERGENCE_PAIRS,
    abe_contrastive_loss,
    divergence_loss,
)
from keras_dml.models.distribution import gather_replicas, with_model_losses
from keras_dml.models.embedding_model import (
    EnsembleModel,
    check_backbone,
    l2_normalize,
    resolve_learner_dims,
)
from keras_dml.models.model_loss import deserialize_compile_config


class SplitEnsembleBase(EnsembleModel):
    """Base of the ensembles over a backbone cut at a branch point (not registered itself).

    Takes `ABE`'s shared and loss arguments (each subclass sets its `lambda_div` default);
    subclasses build their parts in `_build_parts` and return `[N, M, d]` raw embeddings.

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018: Eq. 8-10.
    """

    def __init__(
        self,
        backbone,
        num_learners,
        embedding_dim,
        *,
        lambda_div,
        pooling="avg",
        dropout=0.0,
        margin=1.0,
        metric_loss=None,
        divergence_margin=1.0,
        divergence_pairs="self",
        **kwargs,
    ):
        learner_dims = resolve_learner_dims(embedding_dim, num_learners, equal=True)
        check_backbone(backbone)
        super().__init__(backbone, learner_dims, pooling=pooling, dropout=dropout, **kwargs)
        self._build_parts(backbone)
        self._init_training(
            self.num_learners,
            margin,
            metric_loss,
            lambda_div,
            divergence_margin,
            divergence_pairs,
        )
        self.build(backbone.inputs[0].shape)

    def _build_parts(self, backbone):
        """Creates the subclass's layers (its extractors, masks and heads) from `backbone`."""
        raise NotImplementedError(f"{type(self).__name__} must implement `_build_parts`.")

    def _init_training(
        self,
        num_learners,
        margin,
        metric_loss,
        lambda_div,
        divergence_margin,
        divergence_pairs,
    ):
        if float(lambda_div) < 0.0:
            raise ValueError(f"`lambda_div` must be >= 0. Received: lambda_div={lambda_div}")
        if divergence_pairs not in DIVERGENCE_PAIRS:
            raise ValueError(
                f"`divergence_pairs` must be one of {DIVERGENCE_PAIRS}. "
                f"Received: divergence_pairs={divergence_pairs!r}"
            )
        self.margin = float(margin)
        self.metric_loss = metric_loss
        self._metric_loss_fn = None
        if metric_loss is not None:
            if isinstance(metric_loss, dict):  # a class-based loss covers the whole output
                metric_loss = losses.with_class_arguments(
                    metric_loss, embedding_dim=self.embedding_dim
                )
                metric_loss = losses.with_memory_count(metric_loss, num_learners)
                self.metric_loss = metric_loss
            loss = losses.get(metric_loss)
            if losses.is_class_loss(loss) or losses.is_memory_loss(loss):
                # Class vectors: one [C, D] variable, learner m uses the columns of its slice (its
                # own proxies). Cross-batch memory: learner m uses memory m.
                losses.check_memory_count(loss, num_learners, type(self).__name__)
                self.loss_slot.held.append(loss)
            elif isinstance(loss, keras.losses.Loss):
                self._metric_loss_fn = loss
            else:
                raise ValueError(
                    "`metric_loss` must be a loss without trainable weights (e.g. 'contrastive', "
                    "'margin') or a class-based one (e.g. 'proxy_anchor', 'normalized_softmax'). "
                    f"Received: metric_loss={metric_loss!r}"
                )
        self.lambda_div = float(lambda_div)
        self.divergence_margin = float(divergence_margin)
        self.divergence_pairs = divergence_pairs
        names = ["metric_loss"] + [f"learner_{m}_loss" for m in range(num_learners)]
        if self.uses_divergence:
            names.append("divergence_loss")
        self.loss_trackers = [keras.metrics.Mean(name=n) for n in names]

    @property
    def uses_divergence(self):
        """Whether Eq. 9 is part of the loss (needs M >= 2 and `lambda_div > 0`)."""
        return self.num_learners > 1 and self.lambda_div > 0.0

    # -- forward (library contract) -------------------------------------------------------------
    def learner_embeddings(self, images, training=False):
        """Per-learner L2-normalised embeddings: a list of M `[N, d]` tensors."""
        raw = self.raw_learner_embeddings(images, training=training)
        return [l2_normalize(raw[:, m]) for m in range(self.num_learners)]

    def call(self, images, training=False):
        images = self.checked_images(images)
        normalised = l2_normalize(self.raw_learner_embeddings(images, training=training))
        embeddings = ops.reshape(normalised, (-1, self.embedding_dim))
        return self.served(images, embeddings, training)

    def _gradcam_model(self, learner, target, global_part, head):
        """Grad-CAM model of one learner: `S`, `global_part(features, mark)`, pooling, `head`."""
        mark = keras.layers.Identity(name="gradcam_target")
        inputs = keras.Input(self.image_shape, name="images")
        features = self.spatial_extractor(inputs)
        features = mark(features) if target == "spatial" else features
        feature_map = global_part(features, mark)
        feature_map = mark(feature_map) if target == "features" else feature_map
        outputs = head(self.pool(feature_map))
        return keras.Model(inputs, outputs, name=f"{self.name}_learner_{learner}")

    # -- training -------------------------------------------------------------------------------
    def metric_term(self, labels, embeddings, learner=0):
        """`L_metric,(m)` of one learner: Eq. 10, or `metric_loss` on its own slice or memory."""
        if self.loss_layer is not None and losses.is_memory_loss(self.loss_layer):
            return ops.cast(self.loss_layer(labels, embeddings, memory=learner), "float32")
        if self.loss_layer is not None:
            start, stop = self.learner_slices()[learner]
            weights = ops.cast(self.loss_layer.class_weight_variable, "float32")[:, start:stop]
            return ops.cast(
                class_loss_with_weights(self.loss_layer, labels, embeddings, weights), "float32"
            )
        if self._metric_loss_fn is None:
            return abe_contrastive_loss(labels, embeddings, margin=self.margin)
        return ops.cast(self._metric_loss_fn(labels, embeddings), "float32")

    def loss_terms(self, labels, embeddings):
        """Every loss term of a batch from the labels and the model output.

        Returns:
            dict of float32 scalars: `loss` (Eq. 8), `metric_loss`, `learner_{m}_loss` and, when
            used, `divergence_loss` (Eq. 9, before the `lambda_div` factor).
        """
        labels = ops.reshape(labels, (-1,))
        learners = self.split_output(ops.cast(embeddings, "float32"))
        terms = {
            f"learner_{m}_loss": self.metric_term(labels, e, m) for m, e in enumerate(learners)
        }
        terms["metric_loss"] = sum(terms.values())
        total = terms["metric_loss"]
        if self.uses_divergence:
            terms["divergence_loss"] = divergence_loss(
                learners, margin=self.divergence_margin, pairs=self.divergence_pairs
            )
            total = total + self.lambda_div * terms["divergence_loss"]
        terms["loss"] = total
        return terms

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Eq. 8 on the batch; pairs span the global batch under `tf.distribute`."""
        del x, sample_weight, training
        if y is None:
            raise ValueError(f"{type(self).__name__} trains on (images, labels) batches.")
        # Every replica computes the loss of the global batch; the all-gather gradient sums
        # the replicas' contributions, hence the 1/R scaling (as Keras losses do).
        replicas, (labels, embeddings) = gather_replicas(ops.reshape(y, (-1,)), y_pred)
        terms = self.loss_terms(labels, embeddings)
        for tracker in self.loss_trackers:
            tracker.update_state(terms[tracker.name])
        return with_model_losses(self, terms["loss"], replicas)

    def compile(self, optimizer="rmsprop", **kwargs):
        """Configures training; the loss is built in (Eq. 8), so pass no `loss`."""
        if kwargs.get("loss") is not None:
            raise ValueError(
                f"{type(self).__name__} computes its own loss (Eq. 8-10); choose it with the "
                f"constructor (`margin`, `metric_loss`, `lambda_div`). Received: "
                f"loss={kwargs['loss']!r}"
            )
        super().compile(optimizer=optimizer, **kwargs)

    def compile_from_config(self, config):
        """Restores the compiled state of a `.keras` file (the loss is built in)."""
        config = deserialize_compile_config(config)
        config.pop("loss", None)
        self.compile(**config)
        if getattr(self, "optimizer", None) is not None and self.built:
            self.optimizer.build(self.trainable_variables)  # so its saved state can load

    # -- serialization --------------------------------------------------------------------------
    def _base_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "num_learners": self.num_learners,
            "embedding_dim": self.embedding_dim,
            "branch_point": self.branch_point,
            "pooling": self.pooling,
            "dropout": self.dropout,
            "margin": self.margin,
            "metric_loss": self.metric_loss,
            "lambda_div": self.lambda_div,
            "divergence_margin": self.divergence_margin,
            "divergence_pairs": self.divergence_pairs,
        }
