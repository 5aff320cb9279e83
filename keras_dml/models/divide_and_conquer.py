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

    The embedding layer is split into K consecutive slices (one `Dense` head per learner, each
    L2-normalised); the output is their concatenation. Training alternates (Algorithm 1):

    - **divide** (stage 0): each batch comes from ONE cluster `C_k` of the data (batches
      `(images, {"labels": [B], "clusters": [B]})` from `ClusterMPerClassSampler`); the loss is
      computed on learner k's slice only (Eq. 3), so only the backbone and head k receive
      gradients; the other heads' gradients are exactly zero (an optimizer with momentum still
      moves them by their running moments, as the reference code's one Adam over the sliced
      layer does). `DivideAndConquerCallback` re-clusters the data every T epochs and switches
      to the conquer stage.
    - **conquer** (stage 1, Sec. 3.3 "Merging the solutions"): the loss is computed on the full,
      concatenated embedding and every weight is updated. Batches without cluster ids
      (`(images, labels)`) always train the full embedding.

    The stage and the number of divisions so far are non-trainable variables of the model
    (`stage_variable`, `division_count`), so they are saved in checkpoints and `.keras` files.

    Implementation notes:
    - The step is Keras' own `train_step` on every backend; `compute_loss` selects the batch's
      learner with a one-hot over the learners computed from its cluster id, and `ops.cond`
      evaluates only the loss of the active branch (learner slice or full embedding); on JAX,
      whose `cond` cannot advance a random loss's seed, both are evaluated and one selected.
    - The loss is the compiled loss (any keras_dml loss, default `MarginLoss(beta=1.2,
      margin=0.2)` with distance-weighted sampling). Under `tf.distribute.MirroredStrategy`
      (both stages) it is computed on the embeddings gathered from every replica, so it equals
      the loss of the global batch on one device.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map
            (`keras_dml.backbones.get`).
        embedding_dim: int. Total embedding size d, split into K slices of d/K (when K does not
            divide d, the first d mod K slices are one larger). Defaults to `128`.
        num_learners: int. K, the number of learners (= clusters). Defaults to `4`.
        learner_dims: tuple of int. Explicit slice sizes; overrides the even split.
            Defaults to `None`.
        learner_weights: must be `None` (kept so configs of the base class load). Defaults to
            `None`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout on pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model`.

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = DivideAndConquer(backbone, embedding_dim=64, num_learners=4)
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-5))  # margin loss by default
    >>> # model.fit(cluster_batches, epochs=20, callbacks=[DivideAndConquerCallback(...)])

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2 (splitting the embedding), Sec. 3.3 and Eq. (3) (per-learner loss, alternating
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
        """Cross-batch memory keys: 0 the whole embedding (conquer), `1 + k` learner k (divide).

        A learner's memory holds only the batches of its own cluster, in its own subspace.
        """
        return 1 + self.num_learners

    @property
    def stage(self):
        """`"divide"` or `"conquer"`."""
        return "conquer" if int(ops.convert_to_numpy(self.stage_variable)) else "divide"

    def set_stage(self, stage):
        """Switches between per-cluster learner updates and full-embedding updates.

        Args:
            stage: str. `"divide"` (Eq. 3, one learner per batch) or `"conquer"` (full embedding).
        """
        if stage not in ("divide", "conquer"):
            raise ValueError(f"`stage` must be 'divide' or 'conquer'. Received: stage={stage!r}")
        self.stage_variable.assign(CONQUER if stage == "conquer" else DIVIDE)

    # -- training (`compile`: `DivisionModel`'s, the margin loss by default) -------------------
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The configured loss of the batch's learner slice (divide) or of the whole embedding.

        The batch's cluster id (the `clusters` target) selects learner k through a one-hot over
        the learners, so the gradient of every other head is exactly zero (Eq. 3): the step is
        Keras' own, on every backend. The gradients of the others being zero, an optimizer with
        momentum (Adam) still moves their weights by their running moments, as one optimizer
        over the sliced linear layer of the reference code does; plain SGD leaves them in place.
        Conquer-stage batches, batches without cluster ids and evaluation use the whole
        embedding. Under `tf.distribute` the loss is that of the global batch.

        Args:
            x: the images (unused).
            y: labels `[B]`, or `{"labels", "clusters"}` (cluster ids from the sampler).
            y_pred: the model output `[B, D]` (concatenated normalised learners).
            sample_weight: optional per-example weights.
            training: bool. Evaluation always uses the whole embedding.

        Returns:
            Scalar float32 loss.
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
