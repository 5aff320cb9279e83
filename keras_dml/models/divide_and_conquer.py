"""`DivideAndConquer`: K learners on K clusters, trained in alternation, then merged."""

import keras
from keras import ops

from keras_dml.losses.cross_batch_memory import is_memory_loss
from keras_dml.models.distribution import gather_replicas, with_model_losses
from keras_dml.models.division.model import DivisionModel, batch_cluster, split_targets

DIVIDE, CONQUER = 0, 1


@keras.saving.register_keras_serializable(package="keras_dml")
class DivideAndConquer(DivisionModel):
    """Divide & Conquer: the embedding split into K learners, each trained on its own cluster.

    Each batch comes from one cluster: the divide stage trains its learner's slice only (Eq. 3),
    the conquer stage the whole embedding (docs/methods/dc.md).

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        embedding_dim: int. Total size d, split into K slices. Defaults to `128`.
        num_learners: int. K, the number of learners and clusters. Defaults to `4`.
        learner_dims: tuple of int. Explicit slice sizes. Defaults to `None`.
        learner_weights: must be `None` (kept so configs of the base class load).
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout on the pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model`.

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.DivideAndConquer(backbone, embedding_dim=64, num_learners=4)
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-5))  # margin loss by default

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2 (splitting the embedding), Sec. 3.3 and Eq. 3 (per-learner loss, alternating
        updates), Algorithm 1.
    """

    def __init__(
        self,
        backbone,
        embedding_dim=128,
        num_learners=4,
        learner_dims=None,
        learner_weights=None,
        pooling="avg",
        dropout=0.0,
        **kwargs,
    ):
        if learner_weights is not None:
            raise ValueError(
                "DivideAndConquer learners are unweighted (the output is the plain concatenation "
                f"of normalised slices). Received: learner_weights={learner_weights}"
            )
        super().__init__(
            backbone,
            embedding_dim=embedding_dim,
            num_learners=num_learners,
            learner_dims=learner_dims,
            learner_weights=None,
            pooling=pooling,
            dropout=dropout,
            **kwargs,
        )

    def build(self, input_shape):
        if not hasattr(self, "stage_variable"):
            self.stage_variable = self.add_weight(
                shape=(), dtype="int32", initializer="zeros", trainable=False, name="dc_stage"
            )
            self.division_count = self.add_weight(
                shape=(),
                dtype="int32",
                initializer="zeros",
                trainable=False,
                name="dc_division_count",
            )
        super().build(input_shape)

    # -- stage ----------------------------------------------------------------------------------
    @property
    def loss_memory_keys(self):
        """Memory keys: 0 the whole embedding (conquer), `1 + k` learner k (divide)."""
        return 1 + self.num_learners

    @property
    def stage(self):
        """`"divide"` or `"conquer"`."""
        return "conquer" if int(ops.convert_to_numpy(self.stage_variable)) else "divide"

    def set_stage(self, stage):
        """Switches to `"divide"` (one learner per batch, Eq. 3) or `"conquer"` (all of it)."""
        if stage not in ("divide", "conquer"):
            raise ValueError(f"`stage` must be 'divide' or 'conquer'. Received: stage={stage!r}")
        self.stage_variable.assign(CONQUER if stage == "conquer" else DIVIDE)

    # -- training (`compile`: `DivisionModel`'s, the margin loss by default) -------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The loss of the batch's learner slice (divide) or of the whole embedding (global batch).

        `y` holds labels, or `{"labels", "clusters"}`; evaluation always uses the whole embedding.
        """
        del x
        labels, clusters = split_targets(y)
        replicas, (labels, y_pred, sample_weight) = gather_replicas(labels, y_pred, sample_weight)
        if clusters is None or not training:
            loss = self.metric_loss(labels, y_pred, sample_weight)
            return with_model_losses(self, loss, replicas)
        num = self.num_learners
        cluster = batch_cluster(clusters)
        in_range = ops.logical_and(cluster >= 0, cluster < num)
        divide = ops.logical_and(ops.equal(self.stage_variable, DIVIDE), in_range)
        one_hot = ops.one_hot(ops.clip(cluster, 0, num - 1), num, dtype="float32")
        learners = self.split_output(ops.cast(y_pred, "float32"))
        slices = self.learner_slices()

        def learner_loss():
            # A class-based loss (proxies) gives learner k the columns of its slice: each learner
            # has its own class vectors inside the one [C, D] variable, the whole in conquer.
            if len(set(self.learner_dims)) == 1:
                # Equal slices: one loss evaluation on the one-hot-selected slice.
                active = ops.sum(ops.stack(learners) * one_hot[:, None, None], axis=0)

                def active_columns(w):
                    parts = ops.stack([w[:, a:b] for a, b in slices])
                    return ops.sum(parts * one_hot[:, None, None], axis=0)

                return self.metric_loss(
                    labels,
                    active,
                    sample_weight,
                    active_columns,
                    memory=1 + ops.argmax(one_hot),
                    update=divide,
                )
            losses = ops.stack(
                [
                    self.metric_loss(
                        labels,
                        e,
                        sample_weight,
                        lambda w, a=a, b=b: w[:, a:b],
                        memory=1 + k,
                        update=ops.logical_and(divide, one_hot[k] > 0),
                    )
                    for k, (e, (a, b)) in enumerate(zip(learners, slices))
                ]
            )
            return ops.sum(losses * one_hot)

        def full_loss():
            return self.metric_loss(labels, y_pred, sample_weight, update=ops.logical_not(divide))

        if keras.backend.backend() == "jax" or is_memory_loss(self.loss_layer):
            # A loss that draws random samples advances its SeedGenerator, which JAX cannot do
            # inside a `cond` branch (UnexpectedTracerError at the conquer stage), nor can a
            # cross-batch memory update its variables there under MirroredStrategy: evaluate
            # both losses and select one; the other gets no gradient and no memory update.
            loss = ops.where(divide, ops.cast(learner_loss(), "float32"), full_loss())
        else:
            # One loss evaluation per step: the branch not taken is not computed.
            loss = ops.cond(divide, lambda: ops.cast(learner_loss(), "float32"), full_loss)
        return with_model_losses(self, loss, replicas)
