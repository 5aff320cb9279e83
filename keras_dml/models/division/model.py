"""`DivisionModel`: the base both cluster-conditioned models (D&C, hierarchical D&C) compile on.

Their batches' targets are `{"labels": [B], "clusters": [B]}`; `split_targets` and
`batch_cluster` read them in `compute_loss`.
"""

from keras import ops

from keras_dml.losses.cross_batch_memory import is_memory_loss
from keras_dml.losses.margin import MarginLoss
from keras_dml.models.embedding_model import EmbeddingModel


def default_division_loss():
    """The papers' metric loss: `MarginLoss(beta=1.2, margin=0.2)`, distance-weighted sampling.

    Returns:
        `keras_dml.losses.MarginLoss`.

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 4.2 (the margin loss of Wu et al., ICCV 2017, initialised with beta 1.2); margin 0.2
        and the distance-weighted negatives as in the reference code (METHOD_NOTES).
    """
    return MarginLoss(beta=1.2, margin=0.2, sampling="distance_weighted")


class DivisionModel(EmbeddingModel):
    """Base of the models trained on cluster-conditioned batches (not registered itself).

    Batches are `(images, {"labels": [B], "clusters": [B]})` (`keras_dml.models.division`),
    each from one cluster; subclasses select, in `compute_loss`, what the batch's cluster trains.
    This class adds what both share: the margin loss as default loss and an optimizer built on
    every trainable variable at `compile`, so the cluster-conditioned steps never create
    optimizer state.

    Args:
        pooling: str. `"avg"`, `"max"` or `"avgmax"` global pooling of the backbone features.
            Defaults to `"avg"`.
        dropout: float. Dropout on pooled features. Defaults to `0.0`.
        **kwargs: the other arguments of `EmbeddingModel`, and those of `keras.Model`.

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019;
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021.
    """

    def reset_learner_memories(self):
        """Empties the learners' cross-batch memories (keys 1..K) after a division.

        A learner's memory holds its own cluster's batches only (`loss_memory_keys`); a division
        gives the learners other clusters, so their old entries go. The whole embedding's
        memory (key 0) and the warm-up counters stay: the features do not restart. A no-op
        without a `CrossBatchMemory` loss.
        """
        memory = self.loss_layer
        if memory is not None and is_memory_loss(memory):
            memory.reset_memory(keys=range(1, memory.num_memories), restart_warmup=False)

    def compile(self, optimizer="adam", loss=None, **kwargs):
        """`keras.Model.compile`, with the paper's margin loss when `loss` is `None`.

        The optimizer is built on every trainable variable right away, so the per-learner
        updates inside the compiled step never create optimizer state.

        Args:
            optimizer: optimizer instance or name. Defaults to `"adam"`.
            loss: metric loss; `None` keeps an owned loss layer, else uses
                `default_division_loss()`. Defaults to `None`.
            **kwargs: passed to `keras.Model.compile`.
        """
        if loss is None and self.loss_layer is None:
            loss = default_division_loss()
        super().compile(optimizer=optimizer, loss=loss, **kwargs)
        if self.optimizer is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)


def split_targets(y):
    """Splits the targets of a batch into `(labels, clusters or None)`.

    Accepts `labels`, `{"labels": ..., "clusters": ...}` or `{"labels": ...}`.
    """
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
    """The cluster id of a batch (every example of a batch comes from one cluster): int32 scalar.

    Args:
        clusters: int tensor `[B]` (or `[B, 1]`), the `clusters` target.

    Returns:
        int32 scalar tensor, the first example's cluster id.
    """
    return ops.cast(ops.reshape(clusters, (-1,))[0], "int32")
