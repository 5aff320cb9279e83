"""The loss terms of one BIER batch: boosted learner losses (Algorithm 1) and diversity (Eq. 11)."""

import tensorflow as tf
from keras import ops

from keras_dml.models.bier.boosted_loss import boosted_learner_losses
from keras_dml.models.embedding_model import l2_normalize


def bier_loss_terms(model, images, labels, training=False):
    """Forward pass of `model` and every loss term of one batch.

    Under a multi-replica `tf.distribute` strategy the embeddings and labels are gathered from
    all replicas, so pairs span the global batch and every replica computes the same global loss
    (`BIER.train_step` divides it by the number of replicas).

    Args:
        model: a `BIER` model.
        images: float tensor `[N, H, W, 3]`, raw pixels.
        labels: int tensor `[N]`.
        training: bool. Training mode of the backbone and dropout. Defaults to `False`.

    Returns:
        dict with `loss` (total, Eq. 11), `metric_loss`, `learner_{m}_loss` and
        `diversity_loss` (when enabled), scalar float32 tensors.

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Algorithm 1, Eq. 4-11.
    """
    labels = ops.reshape(labels, (-1,))
    features = model.dropout_layer(model.features(images, training=training), training=training)
    embeddings = [l2_normalize(head(features)) for head in model.heads]
    replica_context = tf.distribute.get_replica_context()
    if replica_context is not None and replica_context.num_replicas_in_sync > 1:
        # Pairs span the global batch: every replica computes the same global loss. The
        # gradient of all_gather sums the replicas' upstream gradients and the optimizer sums
        # the replicas' variable gradients, so `train_step` divides the loss by R.
        embeddings = [replica_context.all_gather(e, axis=0) for e in embeddings]
        labels = replica_context.all_gather(labels, axis=0)
    learner_losses, _ = boosted_learner_losses(
        embeddings, labels, model.loss_form, variant=model.boosting, shrinkage=model.shrinkage
    )
    result = {f"learner_{m}_loss": v for m, v in enumerate(learner_losses)}
    result["metric_loss"] = sum(learner_losses)
    total = result["metric_loss"]
    if model.diversity_layer is not None:
        fixed = ops.cast(ops.stop_gradient(features), "float32")
        kernels = [head.kernel for head in model.heads]
        raw = [ops.matmul(fixed, ops.cast(w, "float32")) for w in kernels]
        result["diversity_loss"] = model.diversity_layer(raw, kernels=kernels)
        total = total + model.lambda_div * result["diversity_loss"]
    if model.losses:
        total = total + ops.cast(sum(model.losses), "float32")
    result["loss"] = total
    return result
