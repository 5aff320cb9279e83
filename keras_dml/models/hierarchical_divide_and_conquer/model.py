"""`HierarchicalDivideAndConquer`: one embedding, soft masks per cluster, progressive division."""

import keras
import tensorflow as tf
from keras import ops

from keras_dml.models.division.distribution import (
    UnsupportedStrategyError,
    split_targets,
    unscale_for_distribution,
)
from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.hierarchical_divide_and_conquer.mask_optimizer import build_mask_optimizer
from keras_dml.models.hierarchical_divide_and_conquer.state import FINETUNE, DivisionStateMixin


@keras.saving.register_keras_serializable(package="keras_dml")
class HierarchicalDivideAndConquer(DivisionStateMixin, EmbeddingModel):
    """Hierarchical Divide & Conquer: learnable soft masks over one embedding, one per cluster.

    The backbone and one linear layer give the embedding `f(x)` of size d; a `SoftMask` layer
    holds K_max masks `s_k`. Only the first K masks are active (K grows by progressive division,
    driven by `HierarchicalDivideAndConquerCallback`).

    Training (`fit` on batches `(images, {"labels", "clusters"})`, each batch from ONE cluster):
    - **divide** stage: a batch of cluster k is embedded in subspace k, `L2(f(x) * relu(s_k))`
      (Eq. 4), and the loss is the compiled metric loss on it plus `orthogonality_weight` times
      the mask orthogonality loss of the active masks (Eq. 5-6). Only mask k (and, through Eq. 5,
      the other active masks) and the shared network receive gradients.
    - **fine-tune** stage (`set_stage("finetune")`): the loss uses the final embedding of Eq. 8,
      while batches are still sampled within clusters (Sec. 3.3). Batches without cluster ids
      always use the final embedding.
    The masks are updated by their own optimizer (`mask_optimizer`, the main optimizer's class
    and settings with the learning rate x `mask_lr_multiplier`, see `mask_optimizer.py`); its
    state is reset at every division. When `backbone_frozen` is set (one epoch after each
    re-clustering, METHOD_NOTES) the step updates the embedding layer and the masks only: the
    backbone's weights and optimizer slots are left untouched.

    Inference: `call(images)` returns `L2(f(x) * sum_{k<K} relu(s_k))` (Eq. 8), a single learner
    of size d (`learner_dims == (d,)`); `subspace_embeddings(images)` gives the K subspaces.

    State saved with the weights (checkpoints, `.keras`): the masks, `num_active` (K),
    `division_depth`, `recluster_count`, the stage, `backbone_frozen`, and, when
    `num_train_samples` is given, the cluster assignment of the training set
    (`cluster_assignment`), so a resumed run continues with the same clusters and learners.

    Like `DivideAndConquer`, the per-cluster step needs one device (a conditional optimizer
    update); a multi-replica strategy raises a clear error.

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        embedding_dim: int. d, the size of `f(x)` and of the output. Defaults to `512`.
        max_learners: int. K_max, the largest number of clusters / masks. Defaults to `4`.
        fixed_masks: bool. Fixed disjoint 0/1 masks ("Ours (fix)") instead of learned ones.
            Defaults to `False`.
        orthogonality_weight: float. lambda of Eq. 6. Defaults to `1.0`.
        mask_lr_multiplier: float. Learning-rate multiplier of the masks. Defaults to `1.0`.
        num_train_samples: int or `None`. Size of the training set; when given, the cluster
            assignment is a model variable. Defaults to `None`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout on pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model`.

    Examples:
    >>> import keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = HierarchicalDivideAndConquer(backbone, embedding_dim=64, max_learners=4)
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-4))  # margin loss by default
    >>> # model.fit(batches, epochs=20, callbacks=[HierarchicalDivideAndConquerCallback(...)])

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1-3.3, Eq. (4)-(8).
    """

    def __init__(
        self,
        backbone,
        embedding_dim=512,
        max_learners=4,
        fixed_masks=False,
        orthogonality_weight=1.0,
        mask_lr_multiplier=1.0,
        num_train_samples=None,
        pooling="avg",
        dropout=0.0,
        **kwargs,
    ):
        for key in ("num_learners", "learner_dims", "learner_weights"):
            value = kwargs.pop(key, None)
            if value not in (None, 1, [int(embedding_dim)], (int(embedding_dim),)):
                raise ValueError(
                    "HierarchicalDivideAndConquer has one output learner of size embedding_dim; "
                    f"use max_learners for the number of masks. Received: {key}={value!r}"
                )
        if isinstance(max_learners, bool) or int(max_learners) < 1:
            raise ValueError(f"`max_learners` must be >= 1. Received: max_learners={max_learners}")
        if fixed_masks and int(max_learners) > int(embedding_dim):
            raise ValueError(
                "Fixed masks need embedding_dim >= max_learners. Received: "
                f"embedding_dim={embedding_dim}, max_learners={max_learners}"
            )
        if float(orthogonality_weight) < 0.0:
            raise ValueError(
                f"`orthogonality_weight` must be >= 0. Received: {orthogonality_weight}"
            )
        if float(mask_lr_multiplier) <= 0.0:
            raise ValueError(f"`mask_lr_multiplier` must be > 0. Received: {mask_lr_multiplier}")
        if num_train_samples is not None and int(num_train_samples) < 1:
            raise ValueError(f"`num_train_samples` must be >= 1. Received: {num_train_samples}")
        self.max_learners = int(max_learners)
        self.fixed_masks = bool(fixed_masks)
        self.orthogonality_weight = float(orthogonality_weight)
        self.mask_lr_multiplier = float(mask_lr_multiplier)
        self.num_train_samples = None if num_train_samples is None else int(num_train_samples)
        super().__init__(
            backbone,
            embedding_dim=embedding_dim,
            num_learners=1,
            pooling=pooling,
            dropout=dropout,
            **kwargs,
        )
        self.mask_optimizer = None

    # -- forward --------------------------------------------------------------------------------
    def raw_embedding(self, images, training=False):
        """`f(x)`: the unmasked, unnormalised embedding `[N, d]`."""
        return self.raw_learner_embeddings(images, training=training)[0]

    def call(self, images, training=False):
        return self.soft_mask.combine(self.raw_embedding(images, training), self.num_active)

    def learner_embeddings(self, images, training=False):
        """The final embedding of Eq. 8 as the single learner: `[tensor [N, d]]`."""
        return [self(images, training=training)]

    def subspace_embeddings(self, images, training=False):
        """The K active subspace embeddings `L2(f(x) * relu(s_k))` (Eq. 4): list of `[N, d]`."""
        raw = self.raw_embedding(images, training)
        return [self.soft_mask.subspace(raw, k) for k in range(self.active_learners)]

    # -- training -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", loss=None, mask_optimizer=None, **kwargs):
        """`keras.Model.compile` plus the mask optimizer.

        Args:
            optimizer: main optimizer (backbone and embedding layer).
            loss: metric loss; defaults to `MarginLoss(beta=1.2, margin=0.2)` with
                distance-weighted sampling.
            mask_optimizer: optimizer of the masks. Defaults to `None`: the main optimizer's
                class and settings with its learning rate x `mask_lr_multiplier`.
            **kwargs: passed to `keras.Model.compile`.
        """
        if loss is None:
            from keras_dml.losses.margin import MarginLoss

            loss = MarginLoss(beta=1.2, margin=0.2, sampling="distance_weighted")
        super().compile(optimizer=optimizer, loss=loss, **kwargs)
        if not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)
        if mask_optimizer is None:
            mask_optimizer = build_mask_optimizer(self.optimizer, self.mask_lr_multiplier)
        else:
            mask_optimizer = keras.optimizers.get(mask_optimizer)
        self.mask_optimizer = mask_optimizer
        if self._mask_variables() and not self.mask_optimizer.built:
            self.mask_optimizer.build(self._mask_variables())

    def _mask_variables(self):
        return list(self.soft_mask.trainable_variables)

    def _network_variables(self):
        return list(self.backbone.trainable_variables), [
            v for head in self.heads for v in head.trainable_variables
        ]

    def train_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        labels, clusters = split_targets(y)
        if clusters is not None and tf.distribute.get_strategy().num_replicas_in_sync > 1:
            raise UnsupportedStrategyError(
                "HierarchicalDivideAndConquer's step updates the backbone conditionally, which "
                "tf.distribute cannot synchronise across replicas. Train on one device."
            )
        with tf.GradientTape() as tape:
            raw = self.raw_embedding(x, training=True)
            final = self.soft_mask.combine(raw, self.num_active)
            if clusters is None:
                embedding = final
            else:
                cluster = ops.cast(ops.reshape(clusters, (-1,))[0], "int32")
                cluster = ops.clip(cluster, 0, ops.cast(self.num_active, "int32") - 1)
                subspace = self.soft_mask.subspace(raw, cluster)
                embedding = ops.where(ops.equal(self.stage_variable, FINETUNE), final, subspace)
            metric_loss = self._compute_loss(x, labels, embedding, sample_weight, training=True)
            orthogonality = self.soft_mask.orthogonality_loss(self.num_active)
            loss = metric_loss + self.orthogonality_weight * orthogonality
            scaled = self.optimizer.scale_loss(loss)
        backbone_vars, head_vars = self._network_variables()
        mask_vars = self._mask_variables()
        grads = tape.gradient(scaled, backbone_vars + head_vars + mask_vars)
        nb, nh = len(backbone_vars), len(head_vars)
        network_grads, mask_grads = grads[: nb + nh], grads[nb + nh :]

        def update(variables, gradients):
            def apply():
                self.optimizer.apply(list(gradients), list(variables))
                return tf.constant(0, tf.int32)

            return apply

        tf.cond(
            ops.equal(self.backbone_frozen, 1),
            update(head_vars, network_grads[nb:]),
            update(backbone_vars + head_vars, network_grads),
        )
        if mask_vars:
            # Undo the loss scaling of the main optimizer (1 without mixed precision).
            factor = ops.cast(self.optimizer.scale_loss(ops.ones((), "float32")), "float32")
            self.mask_optimizer.apply([g / factor for g in mask_grads], mask_vars)

        count = tf.shape(labels)[0]
        self._loss_tracker.update_state(unscale_for_distribution(loss), sample_weight=count)
        self.metric_loss_tracker.update_state(
            unscale_for_distribution(metric_loss), sample_weight=count
        )
        self.orthogonality_tracker.update_state(orthogonality)
        return {
            "loss": self._loss_tracker.result(),
            "metric_loss": self.metric_loss_tracker.result(),
            "orthogonality_loss": self.orthogonality_tracker.result(),
        }

    def test_step(self, data):
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        labels, _ = split_targets(y)
        loss = self._compute_loss(x, labels, self(x, training=False), sample_weight, training=False)
        self._loss_tracker.update_state(
            unscale_for_distribution(loss), sample_weight=tf.shape(labels)[0]
        )
        return {"loss": self._loss_tracker.result()}

    # -- serialization --------------------------------------------------------------------------
    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "embedding_dim": self.embedding_dim,
            "max_learners": self.max_learners,
            "fixed_masks": self.fixed_masks,
            "orthogonality_weight": self.orthogonality_weight,
            "mask_lr_multiplier": self.mask_lr_multiplier,
            "num_train_samples": self.num_train_samples,
            "pooling": self.pooling,
            "dropout": self.dropout,
        }
