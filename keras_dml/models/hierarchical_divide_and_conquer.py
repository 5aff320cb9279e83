"""`HierarchicalDivideAndConquer`: one embedding, soft masks per cluster, progressive division."""

import re

import keras
from keras import ops

from keras_dml.models.distribution import ForwardCache, gather_replicas, with_model_losses
from keras_dml.models.division.hierarchical_state import FINETUNE, DivisionStateMixin
from keras_dml.models.division.model import DivisionModel, batch_cluster, split_targets
from keras_dml.models.embedding_model import l2_normalize
from keras_dml.optimizers import find_multipliers, with_multipliers

# The soft masks' variables, for their own learning rate.
MASK_PATTERN = r"(^|/)soft_mask/"


@keras.saving.register_keras_serializable(package="keras_dml")
class HierarchicalDivideAndConquer(DivisionStateMixin, DivisionModel):
    """Hierarchical Divide & Conquer: learnable soft masks over one embedding, one per cluster.

    A batch of cluster k trains subspace `L2(f(x) * relu(s_k))` (Eq. 4); the output is the final
    embedding of Eq. 8 (docs/methods/hdc.md).

    Args:
        backbone: `keras.Model`. Functional model from raw pixels to a 4-D feature map.
        embedding_dim: int. d, the size of `f(x)` and of the output. Defaults to `512`.
        max_learners: int. K_max, the largest number of clusters and masks. Defaults to `4`.
        fixed_masks: bool. Fixed disjoint 0/1 masks ("Ours (fix)"). Defaults to `False`.
        orthogonality_weight: float. lambda of Eq. 6. Defaults to `1.0`.
        mask_lr_multiplier: float. Learning-rate multiplier of the masks. Defaults to `1.0`.
        num_train_samples: int. Training set size, to keep the clusters. Defaults to `None`.
        pooling: str. `"avg"`, `"max"` or `"avgmax"`. Defaults to `"avg"`.
        dropout: float. Dropout on the pooled features. Defaults to `0.0`.
        **kwargs: passed to `keras.Model`.

    Examples:
    >>> import keras, keras_dml
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.HierarchicalDivideAndConquer(backbone, embedding_dim=64)
    >>> model.compile(optimizer=keras.optimizers.Adam(1e-4))  # margin loss by default

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1-3.3, Eq. 4-8.
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
        self.forward_cache = ForwardCache()
        super().__init__(
            backbone,
            embedding_dim=embedding_dim,
            num_learners=1,
            pooling=pooling,
            dropout=dropout,
            **kwargs,
        )

    # -- forward --------------------------------------------------------------------------------
    def raw_embedding(self, images, training=False):
        """`f(x)`: the unmasked, unnormalised embedding `[N, d]`."""
        return self.raw_learner_embeddings(images, training=training)[0]

    def call(self, images, training=False):
        images = self.checked_images(images)
        raw = self.raw_embedding(images, training)
        output = self.served(images, self.soft_mask.combine(raw, self.num_active), training)
        if training:
            # `compute_loss` of the same step embeds a divide-stage batch in its subspace from
            # `f(x)`; the pair is used only when it receives exactly this output tensor.
            self.forward_cache.put(output, raw)
        return output

    def learner_embeddings(self, images, training=False):
        """The final embedding of Eq. 8 as the single learner: `[tensor [N, d]]`."""
        return [self(images, training=training)]

    def subspace_embeddings(self, images, training=False):
        """The K active subspace embeddings `L2(f(x) * relu(s_k))` (Eq. 4): list of `[N, d]`."""
        raw = self.raw_embedding(images, training)
        return [self.soft_mask.subspace(raw, k) for k in range(self.active_learners)]

    # -- training -------------------------------------------------------------------------------
    def compile(self, optimizer="adam", loss=None, **kwargs):
        """`keras.Model.compile` with the masks' learning-rate multiplier and backbone freezing.

        Args:
            optimizer: main optimizer (backbone and embedding layer). Defaults to `"adam"`.
            loss: metric loss. Defaults to `None` (`default_division_loss()`).
            **kwargs: passed to `keras.Model.compile`.
        """
        if kwargs.pop("mask_optimizer", None) is not None:
            raise ValueError(
                "HierarchicalDivideAndConquer steps its masks with the main optimizer's class and "
                "settings at `mask_lr_multiplier` times its learning rate; set "
                "`mask_lr_multiplier` instead of passing `mask_optimizer`."
            )
        optimizer = with_multipliers(
            optimizer,
            {
                MASK_PATTERN: self.mask_lr_multiplier,
                self.backbone_pattern(): 0.0 if self.is_backbone_frozen() else 1.0,
            },
        )
        # `DivisionModel.compile`: the margin loss by default, the optimizer built at once.
        super().compile(optimizer=optimizer, loss=loss, **kwargs)

    def backbone_pattern(self):
        """The optimizer pattern matching exactly the backbone's trainable variables."""
        paths = [re.escape(v.path) for v in self.backbone.trainable_variables]
        return "^(" + "|".join(paths) + ")$" if paths else "^$"

    @property
    def loss_memory_keys(self):
        """Cross-batch memory keys: 0 the final embedding (fine-tuning), `1 + k` subspace k."""
        return 1 + self.max_learners

    @property
    def mask_optimizer(self):
        """The optimizer of the masks' parameter group (`None` before `compile`)."""
        # The multipliers, also inside the LossScaleOptimizer of a mixed_float16 policy.
        optimizer = find_multipliers(getattr(self, "optimizer", None))
        if optimizer is None or not optimizer.built:
            return None
        return optimizer.group_optimizer(MASK_PATTERN)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The metric loss of the batch's subspace (divide) or final embedding, plus Eq. 5."""
        del x
        labels, clusters = split_targets(y)
        raw = self.forward_cache.take(y_pred)
        replicas, (labels, y_pred, raw, sample_weight) = gather_replicas(
            labels, y_pred, raw, sample_weight
        )
        embedding = ops.cast(y_pred, "float32")
        masks = self.soft_mask.relu_masks()
        active = ops.cast(ops.arange(self.max_learners) < self.num_active, "float32")
        # The mask of the embedding the loss sees: a class-based loss (proxies) compares it with
        # class vectors under the same mask, so each subspace has its own class vectors.
        mask = ops.sum(masks * active[:, None], axis=0)
        memory = 0
        if clusters is not None and training:
            cluster = batch_cluster(clusters)
            cluster = ops.clip(cluster, 0, ops.cast(self.num_active, "int32") - 1)
            if raw is not None:
                subspace = self.soft_mask.subspace(raw, cluster)
            else:  # an output computed elsewhere: the same function of f(x) and the masks
                subspace = self._subspace_of_final(embedding, cluster)
            finetune = ops.equal(self.stage_variable, FINETUNE)
            embedding = ops.where(finetune, embedding, subspace)
            mask = ops.where(finetune, mask, ops.take(masks, cluster, axis=0))
            memory = ops.where(finetune, 0, 1 + cluster)
        metric_loss = self.metric_loss(
            labels,
            embedding,
            sample_weight,
            lambda w: w * ops.cast(mask, w.dtype)[None, :],
            memory=memory,
        )
        orthogonality = self.soft_mask.orthogonality_loss(self.num_active)
        self.metric_loss_tracker.update_state(metric_loss)
        self.orthogonality_tracker.update_state(orthogonality)
        total = metric_loss + self.orthogonality_weight * orthogonality
        return with_model_losses(self, total, replicas)

    def _subspace_of_final(self, final, index):
        masks = self.soft_mask.relu_masks()
        active = ops.cast(ops.arange(self.max_learners) < self.num_active, "float32")
        weights = ops.sum(masks * active[:, None], axis=0)
        mask = ops.take(masks, index, axis=0)
        ratio = ops.where(weights > 0, mask / ops.where(weights > 0, weights, 1.0), 0.0)
        return l2_normalize(final * ratio)

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
            **(
                {}
                if self.loss_layer is None
                else {"loss_layer": keras.saving.serialize_keras_object(self.loss_layer)}
            ),
        }
