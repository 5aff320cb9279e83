"""`BIERObjective`: BIER's loss of a batch, the boosted metric loss plus diversity (Eq. 11)."""

from keras import ops

from keras_dml.models.boosting.boosted_loss import boosted_learner_losses
from keras_dml.models.distribution import gather_replicas, with_model_losses
from keras_dml.models.embedding_model import l2_normalize


class BIERObjective:
    """The loss methods of `BIER` (a mixin placed before `EmbeddingModel`)."""

    def compute_bier_losses(self, images, labels, training=False):
        """Forward pass and every loss term of one batch: `loss_terms(labels, self(images))`."""
        return self.loss_terms(labels, self(images, training=training))

    @property
    def loss_memory_keys(self):
        """A compiled loss is called once per group: group m uses cross-batch memory m."""
        return self.num_learners

    def loss_terms(self, labels, y_pred):
        """Every loss term of a batch from the model output (global batch under `tf.distribute`).

        Returns:
            dict of float32 scalars: `loss` (Eq. 11), `metric_loss`, `learner_{m}_loss` and, when
            enabled, `diversity_loss` (of the training `call` that gave `y_pred`, else 0).

        References:
            Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Algorithm 1, Eq. 4-11.
        """
        labels = ops.reshape(labels, (-1,))
        diversity = self.forward_cache.take(y_pred)
        replicas, (labels, y_pred) = gather_replicas(labels, y_pred)
        # The groups of the output are normalised groups times fixed positive weights.
        embeddings = [l2_normalize(e) for e in self.split_output(ops.cast(y_pred, "float32"))]
        if self.loss is None and self.loss_layer is None:
            learner_losses, _ = boosted_learner_losses(
                embeddings, labels, self.loss_form, variant=self.boosting, shrinkage=self.shrinkage
            )
        else:  # a compiled loss: one unweighted loss per group, on its own class vectors
            learner_losses = [
                self.metric_loss(labels, e, class_weights=lambda w, a=a, b=b: w[:, a:b], memory=m)
                for m, (e, (a, b)) in enumerate(zip(embeddings, self.learner_slices()))
            ]
        result = {f"learner_{m}_loss": v for m, v in enumerate(learner_losses)}
        result["metric_loss"] = sum(learner_losses)
        total = result["metric_loss"]
        if self.diversity_layer is not None:
            if diversity is None:  # an output this model's training call did not produce
                diversity = ops.zeros((), "float32")
            # This replica's diversity: divided by the replica count below, the replicas' summed
            # gradients are those of the diversity of the global batch (a mean over examples).
            result["diversity_loss"] = ops.cast(diversity, "float32")
            total = total + self.lambda_div * result["diversity_loss"]
        result["loss"] = with_model_losses(self, total, replicas)
        return result

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The boosted metric loss of the batch plus the diversity loss `call` added (Eq. 11)."""
        del x, sample_weight, training
        if y is None:
            raise ValueError("BIER trains on (images, labels) batches; the labels are missing.")
        terms = self.loss_terms(y, y_pred)
        for name, tracker in self.loss_trackers.items():
            tracker.update_state(terms[name])
        return terms["loss"]
