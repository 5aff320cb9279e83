"""`DivideAndConquerCallback`: re-clustering every T epochs and the switch to the conquer stage."""

import logging
import time

import keras
import numpy as np

from keras_dml.methods.divide_and_conquer.chief_division import (  # noqa: F401 (re-exported)
    DIVIDED,
    FATAL,
    KEPT,
    cluster_division,
    division_entry,
    encode_outcome,
)
from keras_dml.methods.divide_and_conquer.division_state import restore_division, save_division
from keras_dml.methods.divide_and_conquer.preconditions import (  # noqa: F401 (re-exported)
    CLUSTER_ON,
    CONQUER_SAMPLING,
    check_callback_arguments,
    check_enough_classes,
)
from keras_dml.methods.division.clustering import ClusteringError
from keras_dml.methods.division.embedding_pass import (
    cached_inputs,
    compiled_forward,
    embed_vectors,
    learner_recall_at_1,
    numeric_logs,
)
from keras_dml.models.distribution import from_chief

logger = logging.getLogger(__name__)


class DivideAndConquerCallback(keras.callbacks.Callback):
    """Divides the data among the learners of a `DivideAndConquer` model every T epochs.

    Args:
        train_data: the training split in the sampler's index order (`ImageDataset`, unshuffled
            batched dataset or array).
        labels: 1-D int array. Training labels aligned with `train_data` and the sampler.
        sampler: object with `set_clusters(assignment)`, e.g. `ClusterMPerClassSampler`.
        recluster_every: int. T, epochs between divisions. Defaults to `2`.
        conquer_epoch: int or `None`. First epoch of the conquer stage. Defaults to `None`.
        conquer_sampling: str. `"clusters"` or `"all"`. Defaults to `"clusters"`.
        cluster_on: str. `"embedding"` (paper) or `"features"` (reference code). Defaults to
            `"embedding"`.
        val_data: validation split with labels, for per-learner Recall@1. Defaults to `None`.
        niter: int. k-means iterations. Defaults to `100`.
        nredo: int. k-means restarts. Defaults to `5`.
        similarity: str. `"iou"` (paper) or `"overlap"` (reference code). Defaults to `"iou"`.
        seed: int. Division n clusters with seed `seed + 1000 * n`. Defaults to `0`.
        state_dir: str or `None`. Folder of the per-division assignments. Defaults to `None`.
        batch_size: int. Batch size of the embedding passes. Defaults to `256`.
        image_size: int or `None`. Input size of the embedding passes, as in training.
            Defaults to `None` (each split's own).

    Raises:
        ValueError: at train begin when there are fewer than 2 * K classes with 2 samples.
        ClusteringError: when the first division finds no acceptable clusters.

    References:
        Sanakoyeu et al., "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019,
        Sec. 3.2-3.3, Algorithm 1, Appendix A (re-clustering and IoU matching).
    """

    def __init__(
        self,
        train_data,
        labels,
        sampler,
        recluster_every=2,
        conquer_epoch=None,
        conquer_sampling="clusters",
        cluster_on="embedding",
        val_data=None,
        niter=100,
        nredo=5,
        similarity="iou",
        seed=0,
        state_dir=None,
        batch_size=256,
        image_size=None,
    ):
        super().__init__()
        check_callback_arguments(recluster_every, cluster_on, conquer_sampling, sampler)
        self.train_data = train_data
        self.labels = np.asarray(labels).astype(np.int64)
        self.sampler = sampler
        self.recluster_every = int(recluster_every)
        self.conquer_epoch = None if conquer_epoch is None else int(conquer_epoch)
        self.conquer_sampling = conquer_sampling
        self.cluster_on = cluster_on
        self.val_data = val_data
        self.kmeans_options = {"niter": niter, "nredo": nredo}
        self.similarity = similarity
        self.seed = int(seed)
        self.state_dir = state_dir
        self.batch_size = int(batch_size)
        self.image_size = image_size
        self.assignment = None
        self.history = []
        self._epoch_logs = {}
        self._resumed = False
        self._forward = {}
        self._inputs = {}

    # -- Keras hooks ----------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        check_enough_classes(self.labels, self.model.num_learners)
        self._resumed = False

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_logs = {}
        if not self._resumed:
            # Weights (stage, division count) are restored by checkpoint callbacks in their own
            # on_train_begin, which may run after ours: resume on the first epoch instead.
            self._resumed = True
            self._resume_state()
        conquer = self.conquer_epoch is not None and epoch >= self.conquer_epoch
        self._epoch_logs["dc_conquer"] = float(conquer)  # the stage, in history.json per epoch
        if conquer:
            self.model.set_stage("conquer")
            if self.conquer_sampling == "all":
                if self.assignment is None or self.assignment.max() > 0:
                    self.assignment = np.zeros_like(self.labels)
                    self.sampler.set_clusters(self.assignment)
                return
        if self.assignment is None or epoch % self.recluster_every == 0:
            self.divide(epoch)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs.update(self._epoch_logs)

    # -- division -------------------------------------------------------------------------------
    def divide(self, epoch=None):
        """Re-clusters the training set (on the chief) and updates the sampler; returns the log."""
        model, num = self.model, self.model.num_learners
        count = int(keras.ops.convert_to_numpy(model.division_count))
        outcome = {}

        def chief_division():
            try:
                outcome.update(self._cluster(epoch, count))
            except Exception as error:  # raised below, after the other workers are told
                outcome["error"] = error
            return encode_outcome(outcome, self.labels.size)

        received = from_chief(
            getattr(model, "distribute_strategy", None), chief_division, self.labels.size + 1
        )
        status, assignment = int(received[0]), received[1:].astype(np.int64)
        if "error" in outcome:
            raise outcome["error"]
        if status == FATAL:
            raise ClusteringError(
                f"Division {count} (epoch {epoch}) failed on the chief worker; see its log."
            )
        if status == KEPT:
            self._epoch_logs.update({"dc_division_failed": 1.0})
            entry = outcome.get("entry") or {"epoch": epoch, "division": count, "failed": "chief"}
            self.history.append(entry)
            return entry
        previous = self.assignment
        self.sampler.set_clusters(assignment)
        self.assignment = assignment
        model.reset_learner_memories()
        model.division_count.assign(count + 1)
        entry = outcome.get("entry") or division_entry(epoch, count + 1, assignment, previous, num)
        if self.val_data is not None and "entry" in outcome:  # logs of the chief only
            entry["learner_recall@1"] = self.learner_recall_at_1()
        self.history.append(entry)
        save_division(self.state_dir, count + 1, assignment)
        self._epoch_logs.update(numeric_logs(entry))
        logger.info("D&C division %d at epoch %s: %s", count + 1, epoch, entry)
        return entry

    def _cluster(self, epoch, count):
        """The chief's part of `divide`: embeds, clusters and matches, or returns an `error`."""
        start = time.perf_counter()
        vectors = self._vectors(self.train_data, features=self.cluster_on == "features")
        if vectors.shape[0] != self.labels.shape[0]:
            error = ValueError(
                f"`train_data` gave {vectors.shape[0]} vectors for {self.labels.shape[0]} labels; "
                "pass the unshuffled training split in the sampler's index order."
            )
            return {"error": error}
        return cluster_division(
            vectors,
            self.labels,
            self.model.num_learners,
            self.assignment,
            epoch,
            count,
            seed=self.seed,
            similarity=self.similarity,
            kmeans_options=self.kmeans_options,
            embed_seconds=time.perf_counter() - start,
        )

    def learner_recall_at_1(self):
        """Recall@1 of each learner's slice on `val_data` (list of floats)."""
        embeddings, labels = self._vectors(self.val_data, features=False, with_labels=True)
        return learner_recall_at_1(embeddings, labels, self.model.learner_slices())

    # -- helpers --------------------------------------------------------------------------------
    def _vectors(self, data, features, with_labels=False):
        key = (id(self.model), bool(features))
        if key not in self._forward:
            # One compiled function per model and mode, reused by every division.
            self._forward[key] = compiled_forward(self.model, bool(features))
        if hasattr(data, "as_dataset"):  # an ImageDataset
            if id(data) not in self._inputs:
                self._inputs[id(data)] = cached_inputs(data, self.batch_size, self.image_size)
            data = self._inputs[id(data)]
        return embed_vectors(self._forward[key], data, self.batch_size, with_labels=with_labels)

    def _resume_state(self):
        count = int(keras.ops.convert_to_numpy(self.model.division_count))
        if count == 0 or self.assignment is not None:
            return
        assignment = restore_division(self.state_dir, count, self.labels.shape)
        if assignment is not None:
            self.assignment = assignment
            self.sampler.set_clusters(assignment)
