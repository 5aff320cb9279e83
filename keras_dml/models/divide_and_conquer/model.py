"""`DivideAndConquer`: K learners on K clusters, trained in alternation, then merged."""

import keras
import tensorflow as tf
from keras import ops

from keras_dml.models.division.distribution import (
    UnsupportedStrategyError,
    split_targets,
    unscale_for_distribution,
)
from keras_dml.models.embedding_model import EmbeddingModel, l2_normalize

DIVIDE, CONQUER = 0, 1


@keras.saving.register_keras_serializable(package="keras_dml")
class DivideAndConquer(EmbeddingModel):
    """Divide & Conquer: the embedding split into K learners, each trained on its own cluster.

    The embedding layer is split into K consecutive slices (one `Dense` head per learner, each
    L2-normalised); the output is their concatenation. Training alternates (Algorithm 1):

    - **divide** (stage 0): each batch comes from ONE cluster `C_k` of the data (batches
      `(images, {"labels": [B], "clusters": [B]})` from `ClusterMPerClassSampler`); the loss is
      computed on learner k's slice only (Eq. 3) and the step updates only the backbone and head k.
      The other heads' weights and their optimizer slots (e.g. Adam moments) are not touched.
      `DivideAndConquerCallback` re-clusters the data every T epochs and switches to the conquer
      stage.
    - **conquer** (stage 1, Sec. 3.3 "Merging the solutions"): the loss is computed on the full,
      concatenated embedding and every weight is updated. Batches without cluster ids
      (`(images, labels)`) always train the full embedding.

    The stage and the number of divisions so far are non-trainable variables of the model
    (`stage_variable`, `division_count`), so they are saved in checkpoints and `.keras` files.

    Implementation notes:
    - The learner of a batch is a tensor inside the compiled step, so the optimizer update is a
      `tf.switch_case` with one branch per learner (each applying gradients to backbone + head k
      only) plus one branch for the full embedding. Keras optimizers keep one global `iterations`
      counter, so Adam's bias correction uses the global step (PyTorch counts steps per parameter);
      the moments of idle heads are neither decayed nor updated.
    - The loss is the compiled loss (any keras_dml loss, default `MarginLoss(beta=1.2,
      margin=0.2)` with distance-weighted sampling), evaluated on the active learner's slice and
      on the full embedding, and the active one selected; Keras losses divide by the number of
      replicas (`scale_loss_for_distribution`), and the logged loss is unscaled.
    - A multi-replica `tf.distribute` strategy cannot synchronise gradients inside a conditional
      branch, so divide-stage (clustered) batches raise a clear error there; the conquer stage
      and single-device / one-device strategies work. See the README of this package.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map
            (`keras_dml.backbones.get`).
        embedding_dim: int. Total embedding size d, split into K slices of d/K. Defaults to `128`.
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

    # -- training -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", loss=None, **kwargs):
        """`keras.Model.compile`, with the paper's margin loss when `loss` is `None`.

        The optimizer is built on every trainable variable right away, so the per-learner
        updates inside the compiled step never create optimizer state.
        """
        if loss is None:
            from keras_dml.losses.margin import MarginLoss

            loss = MarginLoss(beta=1.2, margin=0.2, sampling="distance_weighted")
        super().compile(optimizer=optimizer, loss=loss, **kwargs)
        if self.optimizer is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)

    def _branch(self, clusters):
        """Index of the update branch: the batch's learner, or K for the full embedding."""
        full = ops.convert_to_tensor(self.num_learners, "int32")
        if clusters is None:
            return full
        cluster = ops.cast(ops.reshape(clusters, (-1,))[0], "int32")
        in_range = ops.logical_and(cluster >= 0, cluster < self.num_learners)
        divide = ops.logical_and(ops.equal(self.stage_variable, DIVIDE), in_range)
        return ops.where(divide, cluster, full)

    def _head_variables(self, k):
        return list(self.heads[k].trainable_variables)

    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        labels, clusters = split_targets(y)
        if clusters is not None and tf.distribute.get_strategy().num_replicas_in_sync > 1:
            raise UnsupportedStrategyError(
                "DivideAndConquer's per-learner update needs a conditional optimizer step, which "
                "tf.distribute cannot synchronise across replicas. Train the divide stage on one "
                "device (or tf.distribute.OneDeviceStrategy); the conquer stage (batches without "
                "cluster ids) works under MirroredStrategy."
            )
        if not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)
        branch = self._branch(clusters)
        num = self.num_learners
        with tf.GradientTape() as tape:
            features = self.dropout_layer(self.features(x, training=True), training=True)
            learners = [l2_normalize(head(features)) for head in self.heads]
            full = self.combine(learners)
            if clusters is None:
                loss = self._compute_loss(x, labels, full, sample_weight, training=True)
            else:
                # One loss evaluation per step: the branch not taken is never computed.
                loss = tf.cond(
                    ops.equal(branch, num),
                    lambda: self._compute_loss(x, labels, full, sample_weight, training=True),
                    lambda: self._active_learner_loss(x, labels, learners, branch, sample_weight),
                )
            self._loss_tracker.update_state(
                unscale_for_distribution(loss), sample_weight=tf.shape(labels)[0]
            )
            scaled = self.optimizer.scale_loss(loss)

        backbone_vars = list(self.backbone.trainable_variables)
        head_vars = [self._head_variables(k) for k in range(num)]
        all_vars = backbone_vars + [v for group in head_vars for v in group]
        grads = tape.gradient(scaled, all_vars)
        if clusters is None:
            self.optimizer.apply(grads, all_vars)
        else:
            backbone_grads = grads[: len(backbone_vars)]
            head_grads, start = [], len(backbone_vars)
            for group in head_vars:
                head_grads.append(grads[start : start + len(group)])
                start += len(group)

            def update(variables, gradients):
                def apply():
                    self.optimizer.apply(list(gradients), list(variables))
                    return tf.constant(0, tf.int32)

                return apply

            branches = [
                update(backbone_vars + head_vars[k], backbone_grads + head_grads[k])
                for k in range(num)
            ]
            branches.append(update(all_vars, grads))
            tf.switch_case(branch, branches)
        return {"loss": self._loss_tracker.result()}

    def _active_learner_loss(self, x, labels, learners, branch, sample_weight):
        """Loss of the active learner's slice (Eq. 3); `branch == K` is clipped to K - 1."""
        active = ops.minimum(branch, self.num_learners - 1)
        if len(set(self.learner_dims)) == 1:
            # Equal slices: gather the active one (static shape [B, d]), one loss evaluation.
            embedding = tf.gather(tf.stack(learners), active)
            return self._compute_loss(x, labels, embedding, sample_weight, training=True)
        losses = [
            self._compute_loss(x, labels, learner, sample_weight, training=True)
            for learner in learners
        ]
        return tf.gather(tf.stack(losses), active)

    def test_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        labels, _ = split_targets(y)
        embeddings = self(x, training=False)
        loss = self._compute_loss(x, labels, embeddings, sample_weight, training=False)
        self._loss_tracker.update_state(
            unscale_for_distribution(loss), sample_weight=tf.shape(labels)[0]
        )
        return {"loss": self._loss_tracker.result()}
