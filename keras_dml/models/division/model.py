"""`DivisionModel`: the base of D&C and hierarchical D&C, trained on one-cluster batches."""

from keras import ops

from keras_dml.losses.cross_batch_memory import is_memory_loss
from keras_dml.losses.margin import MarginLoss
from keras_dml.models.embedding_model import EmbeddingModel


def default_division_loss():
    """The papers' metric loss: `MarginLoss(beta=1.2, margin=0.2)`, distance-weighted sampling.

    References:
        Sanakoyeu et al., CVPR 2019, Sec. 4.2 (the margin loss of Wu et al., ICCV 2017, beta 1.2);
        margin 0.2 and distance-weighted negatives as in the reference code.
    """
    return MarginLoss(beta=1.2, margin=0.2, sampling="distance_weighted")


class DivisionModel(EmbeddingModel):
    """Base of the models trained on cluster-conditioned batches (not registered itself).

    Batches are `(images, {"labels": [B], "clusters": [B]})`, each from one cluster.

    References:
        Sanakoyeu et al., CVPR 2019 (`DivideAndConquer`) and TPAMI 2021 (hierarchical D&C).
    """

    def reset_learner_memories(self):
        """Empties the learners' cross-batch memories (keys 1..K) after a division."""
        memory = self.loss_layer
        if memory is not None and is_memory_loss(memory):
            memory.reset_memory(keys=range(1, memory.num_memories), restart_warmup=False)

    def compile(self, optimizer="adam", loss=None, **kwargs):
        """`keras.Model.compile`, with `default_division_loss()` when `loss` is `None`.

        Args:
            optimizer: optimizer instance or name. Defaults to `"adam"`.
            loss: metric loss; `None` keeps an owned loss layer, else uses the default.
            **kwargs: passed to `keras.Model.compile`.
        """
        if loss is None and self.loss_layer is None:
            loss = default_division_loss()
        super().compile(optimizer=optimizer, loss=loss, **kwargs)
        # Built now, so the per-learner steps inside the compiled step never create state.
        if self.optimizer is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)


def split_targets(y):
    """`(labels, clusters or None)` of `labels`, `{"labels", "clusters"}` or `{"labels"}`."""
    if isinstance(y, dict):
        if "labels" not in y:
            raise ValueError(
                "Dict targets must hold 'labels' (and optionally 'clusters'). "
                f"Received keys {sorted(y)}."
            )
        return y["labels"], y.get("clusters")
    if y is None:
        raise ValueError("DivideAndConquer needs labels: batches of (images, labels).")
    return y, None


def batch_cluster(clusters):
    """The int32 cluster id of a batch: its first example's (a batch comes from one cluster)."""
    return ops.cast(ops.reshape(clusters, (-1,))[0], "int32")
