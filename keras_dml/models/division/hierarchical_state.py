"""Hierarchical D&C's division state (masks, K, stage, clusters), kept as model variables."""

import keras
import numpy as np
from keras import ops

from keras_dml.layers.soft_mask import SoftMask
from keras_dml.optimizers import find_multipliers

DIVIDE, FINETUNE = 0, 1


class DivisionStateMixin:
    """Variables and eager updates of the progressive division (for the model and its callback).

    Expects `max_learners`, `fixed_masks`, `embedding_dim`, `num_train_samples` and
    `mask_optimizer` on the model.
    """

    def build(self, input_shape):
        if not hasattr(self, "soft_mask"):
            # Created here because EmbeddingModel.__init__ builds (and locks) the model.
            self.soft_mask = SoftMask(self.max_learners, fixed=self.fixed_masks, name="soft_mask")
            self.soft_mask.build((None, self.embedding_dim))
            self.soft_mask.reset(num_active=1)
            self.metric_loss_tracker = keras.metrics.Mean(name="metric_loss")
            self.orthogonality_tracker = keras.metrics.Mean(name="orthogonality_loss")

            def state(name, shape=(), value="zeros"):
                return self.add_weight(
                    shape=shape, dtype="int32", initializer=value, trainable=False, name=name
                )

            self.num_active = state("hdc_num_active", value="ones")
            self.division_depth = state("hdc_division_depth")
            self.recluster_count = state("hdc_recluster_count")
            self.stage_variable = state("hdc_stage")
            self.backbone_frozen = state("hdc_backbone_frozen")
            if self.num_train_samples is not None:
                self.cluster_assignment = state(
                    "hdc_cluster_assignment", shape=(self.num_train_samples,)
                )
        super().build(input_shape)

    # -- state ----------------------------------------------------------------------------------
    @property
    def active_learners(self):
        """K, the number of active masks / clusters (Python int)."""
        return int(ops.convert_to_numpy(self.num_active))

    @property
    def stage(self):
        """`"divide"` or `"finetune"`."""
        return "finetune" if int(ops.convert_to_numpy(self.stage_variable)) else "divide"

    def set_stage(self, stage):
        """`"divide"` (subspace k for cluster k, Eq. 6) or `"finetune"` (final embedding, Eq. 8)."""
        if stage not in ("divide", "finetune"):
            raise ValueError(f"`stage` must be 'divide' or 'finetune'. Received: stage={stage!r}")
        self.stage_variable.assign(FINETUNE if stage == "finetune" else DIVIDE)

    def set_backbone_frozen(self, frozen):
        """Backbone learning rate 0 (`True`) or normal (`False`) for the following steps."""
        self.backbone_frozen.assign(1 if frozen else 0)
        # The multipliers, also inside the LossScaleOptimizer of a mixed_float16 policy.
        optimizer = find_multipliers(getattr(self, "optimizer", None))
        pattern = self.backbone_pattern()
        if optimizer is not None and pattern in getattr(optimizer, "multipliers", {}):
            optimizer.set_multiplier(pattern, 0.0 if frozen else 1.0)

    def is_backbone_frozen(self):
        """Whether the backbone's learning rate is 0 (Python bool)."""
        return bool(int(ops.convert_to_numpy(self.backbone_frozen)))

    def split_learners(self, parents):
        """Applies a division: new learner j descends from learner `parents[j]`.

        Args:
            parents: sequence of int in `[0, K)`, at most two children per parent.
        """
        parents = np.asarray(parents, np.int64).reshape(-1)
        if parents.size and parents.max() >= self.active_learners:
            raise ValueError(
                f"`parents` must index the {self.active_learners} active learners. "
                f"Received {parents.tolist()}."
            )
        self.soft_mask.split(parents)
        self.num_active.assign(int(parents.size))
        self.division_depth.assign(int(ops.convert_to_numpy(self.division_depth)) + 1)
        if self.mask_optimizer is not None:  # as the reference code rebuilds it after a division
            reset_optimizer_state(self.mask_optimizer)

    def set_cluster_assignment(self, assignment):
        """Stores the training-set assignment (when the model holds `cluster_assignment`)."""
        if self.num_train_samples is None:
            return
        assignment = np.asarray(assignment, np.int32).reshape(-1)
        if assignment.size != self.num_train_samples:
            raise ValueError(
                f"The assignment has {assignment.size} entries; the model was built with "
                f"num_train_samples={self.num_train_samples}."
            )
        self.cluster_assignment.assign(assignment)

    def get_cluster_assignment(self):
        """The stored assignment (int64 array) or `None`."""
        if self.num_train_samples is None:
            return None
        return ops.convert_to_numpy(self.cluster_assignment).astype(np.int64)


def reset_optimizer_state(optimizer):
    """Zeroes an optimizer's step counter and moments, keeping its learning rate."""
    if not optimizer.built:
        return
    for variable in optimizer.variables:
        if variable.path.split("/")[-1] == "learning_rate":
            continue
        variable.assign(keras.ops.zeros(variable.shape, variable.dtype))
