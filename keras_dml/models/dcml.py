"""`DCML`: Deep Compositional Metric Learning (learners, compositors, self-reinforced loss)."""

import keras
from keras import ops

from keras_dml.layers.compositor import Compositor
from keras_dml.losses.cross_batch_memory import is_memory_loss
from keras_dml.models.composition.arguments import check_sizes, resolve_lambdas, resolve_losses
from keras_dml.models.composition.diagnostics import average_compositor_weights
from keras_dml.models.composition.objective import compose, self_reinforced_loss
from keras_dml.models.distribution import gather_replicas, with_model_losses
from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.model_loss import deserialize_compile_config

TRACKED_TERMS = ("dis_loss", "subtask_loss", "reinforce_loss", "max_weight")


@keras.saving.register_keras_serializable(package="keras_dml")
class DCML(EmbeddingModel):
    """K learners whose sub-embeddings M learnable compositors combine for the subtasks.

    The output is the concatenation of the K L2-normalised sub-embeddings; `compute_loss` is
    Eq. 8 (docs/methods/dcml.md). Compile with an optimizer only.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        num_learners: int. K. Defaults to `4`.
        learner_dim: int. Size of each sub-embedding. Defaults to `128`.
        num_compositors: int. M. Defaults to `8`.
        lambda_reinforce: float. `lambda_r` of Eq. 8. Defaults to `0.05`.
        lambda_subtask: float or M floats. `lambda_m` of Eq. 8. Defaults to `1.0`.
        loss: `J_dis`, any `keras_dml.losses.get` identifier. Defaults to `"margin"`.
        subtask_loss: `J_T` of every composite. Defaults to `None` (a fresh copy of `loss`).
        normalize_composites: bool. L2-normalise `z_m` before `J_T`. Defaults to `True`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout on the pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model` (e.g. `name`).

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.DCML(backbone, num_learners=4, learner_dim=32)
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-4))

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021: Sec. 3.2
        (Eq. 4-7), Sec. 3.3 (Eq. 8-9, gradient routing), Sec. 4.2 (defaults), Fig. 4.
    """

    def __init__(
        self,
        backbone,
        num_learners=4,
        learner_dim=128,
        num_compositors=8,
        lambda_reinforce=0.05,
        lambda_subtask=1.0,
        loss="margin",
        subtask_loss=None,
        normalize_composites=True,
        pooling="avg",
        dropout=0.0,
        **kwargs,
    ):
        for key in ("embedding_dim", "learner_dims"):
            if key in kwargs:
                raise ValueError(
                    f"DCML's embedding is num_learners x learner_dim: it takes no `{key}` "
                    "(--embedding-dim). Set learner_dim instead (--set model.learner_dim=N). "
                    f"Received: {key}={kwargs[key]!r}"
                )
        num_learners, learner_dim, num_compositors = check_sizes(
            num_learners=num_learners, learner_dim=learner_dim, num_compositors=num_compositors
        )
        if float(lambda_reinforce) < 0:
            raise ValueError(
                f"`lambda_reinforce` must be >= 0. Received: lambda_reinforce={lambda_reinforce}"
            )
        lambdas = resolve_lambdas(lambda_subtask, num_compositors)
        dis_loss, subtask_loss = resolve_losses(
            loss, subtask_loss, num_learners, learner_dim, num_compositors
        )
        # Plain settings first: `EmbeddingModel.__init__` calls `build`, which creates the
        # compositor and trackers (a built model accepts no new state).
        self.learner_dim = learner_dim
        self.num_compositors = num_compositors
        self.lambda_reinforce = float(lambda_reinforce)
        self.lambda_subtask = lambdas
        self.normalize_composites = bool(normalize_composites)
        self._pending_losses = (dis_loss, subtask_loss)
        super().__init__(
            backbone,
            learner_dims=(learner_dim,) * num_learners,
            pooling=pooling,
            dropout=dropout,
            **kwargs,
        )

    def build(self, input_shape):
        self.compositor = Compositor(
            self.num_compositors, len(self.learner_dims), dtype="float32", name="compositor"
        )
        self.compositor.build((None, sum(self.learner_dims)))
        self.dis_loss, self.subtask_loss = self._pending_losses
        del self._pending_losses  # so `.keras` files store the losses' weights under their names
        self.term_trackers = {name: keras.metrics.Mean(name=name) for name in TRACKED_TERMS}
        super().build(input_shape)

    # -- training -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", **kwargs):
        """Configures training; the losses are part of the model, so pass no `loss`."""
        if kwargs.get("loss") is not None:
            raise ValueError(
                "DCML computes its objective (Eq. 8) itself; choose the losses with "
                "DCML(loss=..., subtask_loss=...) and compile without `loss`. "
                f"Received: loss={kwargs['loss']!r}"
            )
        super().compile(optimizer=optimizer, **kwargs)

    def compile_from_config(self, config):
        """Re-compiles a loaded model (optimizer and its state) so `fit` resumes training."""
        config = deserialize_compile_config(config)
        self.compile(**config)
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def composites(self, embeddings):
        """Compositor scores (`weights` `[N, M, K]`, logits) and `composites` `[N, M, d]` (Eq. 4-6).

        Args:
            embeddings: float tensor `[N, K * d]`. Model outputs.
        """
        embeddings = ops.cast(embeddings, "float32")
        scores = self.compositor.scores(ops.stop_gradient(embeddings))
        sub_embeddings = ops.reshape(embeddings, (-1, self.num_learners, self.learner_dim))
        scores["composites"] = compose(
            sub_embeddings, scores["weights"], normalize=self.normalize_composites
        )
        return scores

    def loss_terms(self, labels, embeddings):
        """Every term of Eq. 8 for one batch of labels and model outputs.

        Returns:
            dict of float32 scalars: `dis_loss`, `subtask_loss`, `reinforce_loss`, `max_weight`
            (mean of `max_k |c_m^k|`) and `loss` (the total).
        """
        labels = ops.reshape(labels, (-1,))
        embeddings = ops.cast(embeddings, "float32")
        scores = self.composites(embeddings)
        dis = ops.cast(self.dis_loss(labels, embeddings), "float32")
        subtask = 0.0
        for m, weight in enumerate(self.lambda_subtask):
            term = self.subtask_term(labels, scores["composites"][:, m], m)
            subtask = subtask + weight * ops.cast(term, "float32")
        reinforce = ops.sum(self_reinforced_loss(scores["weighting_logits"]))
        return {
            "dis_loss": dis,
            "subtask_loss": subtask,
            "reinforce_loss": reinforce,
            "max_weight": ops.mean(ops.max(ops.abs(scores["weights"]), axis=-1)),
            "loss": dis + self.lambda_reinforce * reinforce + subtask,
        }

    def subtask_term(self, labels, composite, m):
        """`J_T(z_m)`; a cross-batch memory `J_T` keeps composite m's features in memory m."""
        if is_memory_loss(self.subtask_loss):
            return self.subtask_loss(labels, composite, memory=m)
        return self.subtask_loss(labels, composite)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is None:
            raise ValueError("DCML trains on (images, labels) batches; the labels are missing.")
        if sample_weight is not None:
            raise ValueError(
                "DCML's in-batch pair losses do not support `sample_weight`; pass "
                "(images, labels) batches."
            )
        # In-batch losses over the global batch (static feature size kept, which
        # distance-weighted sampling needs), scaled back by the number of replicas.
        num_replicas, (labels, embeddings) = gather_replicas(ops.reshape(y, (-1,)), y_pred)
        terms = self.loss_terms(labels, embeddings)
        batch_size = ops.shape(embeddings)[0]
        for name, tracker in self.term_trackers.items():
            tracker.update_state(terms[name], sample_weight=batch_size)
        return with_model_losses(self, terms["loss"], num_replicas)

    # -- diagnostics ----------------------------------------------------------------------------
    def compositor_weights(self, images, batch_size=128):
        """Average absolute weight of each compositor per learner (the data of Fig. 4).

        Args:
            images: raw-pixel images `[N, H, W, 3]`, or a dataset of images or `(images, labels)`.
            batch_size: int. Batch size for arrays. Defaults to `128`.

        Returns:
            float32 numpy array `[M, K]`; every row sums to 1.
        """
        return average_compositor_weights(self, images, batch_size=batch_size)

    # -- serialization --------------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        for key in ("embedding_dim", "learner_dims", "learner_weights"):
            config.pop(key, None)
        config.update(
            {
                "learner_dim": self.learner_dim,
                "num_compositors": self.num_compositors,
                "lambda_reinforce": self.lambda_reinforce,
                "lambda_subtask": list(self.lambda_subtask),
                "loss": keras.saving.serialize_keras_object(self.dis_loss),
                "subtask_loss": keras.saving.serialize_keras_object(self.subtask_loss),
                "normalize_composites": self.normalize_composites,
            }
        )
        return config
