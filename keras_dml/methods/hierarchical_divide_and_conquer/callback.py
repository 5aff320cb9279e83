"""`HierarchicalDivideAndConquerCallback`: progressive division every E epochs."""

import logging
import time
import warnings

import keras
import numpy as np

from keras_dml.evaluation.clustering import cluster_nmi
from keras_dml.methods.division.clustering import ClusteringError
from keras_dml.methods.division.embedding_pass import (
    cached_inputs,
    compiled_forward,
    embed_training_set,
)
from keras_dml.methods.hierarchical_divide_and_conquer.chief_division import (
    cluster_and_split,
    decode_outcome,
    division_logs,
    encode_outcome,
)
from keras_dml.methods.hierarchical_divide_and_conquer.preconditions import (  # noqa: F401 (re-exported)
    CLUSTER_ON,
    check_callback_arguments,
    check_training_setup,
)
from keras_dml.models.distribution import from_chief

logger = logging.getLogger(__name__)


class HierarchicalDivideAndConquerCallback(keras.callbacks.Callback):
    """Drives the progressive division of a `HierarchicalDivideAndConquer` model every E epochs.

    Args:
        train_data: the training split in the sampler's index order (`ImageDataset`, unshuffled
            batched dataset or array).
        labels: 1-D int array aligned with `train_data` and the sampler.
        sampler: object with `set_clusters(assignment)` and a fixed `epoch_length`.
        division_every: int. E, epochs between divisions. Defaults to `2`.
        finetune_epoch: int or `None`. First epoch of the fine-tune stage. Defaults to `None`.
        cluster_on: str. `"embedding"` or `"features"`. Defaults to `"embedding"`.
        freeze_backbone: bool. Backbone learning rate 0 the epoch after a division. Defaults to
            `True`.
        split_attempts: int. 2-means seeds tried per cluster. Defaults to `30`.
        niter: int. k-means iterations. Defaults to `100`.
        nredo: int. k-means restarts per attempt. Defaults to `5`.
        similarity: str. `"iou"` (Eq. 3) or `"overlap"`. Defaults to `"iou"`.
        seed: int. Re-clustering n uses seed `seed + 1000 * n`. Defaults to `0`.
        batch_size: int. Batch size of the embedding pass. Defaults to `256`.
        image_size: int or `None`. Input size of the embedding pass, as in training. Defaults
            to `None` (the split's own).

    Raises:
        ValueError: at train begin when the data cannot hold K_max clusters of 2 classes.

    References:
        Sanakoyeu et al., "Improving Deep Metric Learning by Divide and Conquer", TPAMI 2021,
        Sec. 3.1-3.3, Eq. (2)-(3), Fig. 1.
    """

    def __init__(
        self,
        train_data,
        labels,
        sampler,
        division_every=2,
        finetune_epoch=None,
        cluster_on="embedding",
        freeze_backbone=True,
        split_attempts=30,
        niter=100,
        nredo=5,
        similarity="iou",
        seed=0,
        batch_size=256,
        image_size=None,
    ):
        super().__init__()
        check_callback_arguments(division_every, cluster_on, split_attempts, sampler)
        self.train_data = train_data
        self.labels = np.asarray(labels).astype(np.int64).reshape(-1)
        self.sampler = sampler
        self.division_every = int(division_every)
        self.finetune_epoch = None if finetune_epoch is None else int(finetune_epoch)
        self.cluster_on = cluster_on
        self.freeze_backbone = bool(freeze_backbone)
        self.split_attempts = int(split_attempts)
        self.kmeans_options = {"niter": niter, "nredo": nredo}
        self.similarity = similarity
        self.seed = int(seed)
        self.batch_size = int(batch_size)
        self.image_size = image_size
        self.assignment = None
        self.history = []
        self._epoch_logs = {}
        self._started = False
        self._forward = None

    # -- Keras hooks ----------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        check_training_setup(self.model, self.labels)
        self._started = False

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_logs = {}
        if not self._started:
            # Checkpoint callbacks restore weights in their own on_train_begin, possibly after
            # ours: read the model's state at the first epoch instead.
            self._started = True
            self._start(epoch)
        else:
            self.model.set_backbone_frozen(False)
        if self.finetune_epoch is not None and epoch >= self.finetune_epoch:
            self.model.set_stage("finetune")
        if epoch > 0 and epoch % self.division_every == 0:
            self.divide(epoch)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs.update(self._epoch_logs)
            logs["hdc_num_learners"] = float(self.model.active_learners)

    # -- division -------------------------------------------------------------------------------
    def _start(self, epoch):
        model = self.model
        self.model.set_backbone_frozen(False)
        if int(keras.ops.convert_to_numpy(model.recluster_count)) == 0:
            self._set_assignment(np.zeros_like(self.labels))
            return
        stored = model.get_cluster_assignment()
        if stored is not None:
            logger.info("HDC: resumed %d clusters from the model state.", model.active_learners)
            self._set_assignment(stored)
            return
        warnings.warn(
            "HDC: the model was trained before but holds no cluster assignment "
            f"(num_train_samples=None); re-clustering into its {model.active_learners} "
            f"clusters at epoch {epoch}.",
            stacklevel=2,
        )
        self.divide(epoch, allow_split=False)

    def divide(self, epoch=None, allow_split=True):
        """Re-clusters and splits on the chief, updates sampler and model; returns the log entry."""
        model = self.model
        num = model.active_learners
        count = int(keras.ops.convert_to_numpy(model.recluster_count))
        previous = self.assignment
        size, width = self.labels.size, model.max_learners
        outcome = {}

        def chief_division():
            try:
                outcome.update(self._cluster(num, count, previous, allow_split))
            except Exception as error:  # raised below, after the other workers are told
                outcome["error"] = error
            return encode_outcome(outcome, size, width)

        received = from_chief(
            getattr(model, "distribute_strategy", None), chief_division, 2 + size + width
        )
        if "error" in outcome:
            raise outcome["error"]
        ok, reclustered, assignment, parents = decode_outcome(received, size)
        if not ok:
            raise ClusteringError(
                f"HDC division {count} (epoch {epoch}) failed on the chief worker; see its log."
            )
        split = parents.size > 0
        if split:
            model.split_learners(parents)
        unsplit = outcome.get("unsplit", [])
        embed_seconds = outcome.get("embed_seconds", 0.0)
        cluster_seconds = outcome.get("cluster_seconds", 0.0)
        nmi = None if previous is None else cluster_nmi(previous, assignment)
        self._set_assignment(assignment)
        model.reset_learner_memories()
        model.recluster_count.assign(count + 1)
        if self.freeze_backbone:
            model.set_backbone_frozen(True)
        entry = {
            "epoch": epoch,
            "recluster": count + 1,
            "num_learners": model.active_learners,
            "split": split,
            "reclustered": reclustered,
            "unsplit": unsplit,
            "cluster_sizes": np.bincount(assignment, minlength=model.active_learners).tolist(),
            "nmi_previous": nmi,
            "embed_seconds": embed_seconds,
            "cluster_seconds": cluster_seconds,
        }
        self.history.append(entry)
        self._epoch_logs = division_logs(entry)
        logger.info("HDC division at epoch %s: %s", epoch, entry)
        return entry

    def _cluster(self, num, count, previous, allow_split):
        """The chief's part of `divide`: `cluster_and_split` of the embedded training set."""
        model = self.model
        start = time.perf_counter()
        vectors = self._vectors()
        embed_seconds = time.perf_counter() - start
        splittable = None
        if model.fixed_masks and allow_split and num < model.max_learners:
            splittable = [model.soft_mask.block_size(c) >= 2 for c in range(num)]
        outcome = cluster_and_split(
            vectors,
            self.labels,
            num,
            model.max_learners,
            previous,
            count,
            allow_split=allow_split,
            splittable=splittable,
            seed=self.seed,
            similarity=self.similarity,
            split_attempts=self.split_attempts,
            kmeans_options=self.kmeans_options,
        )
        return {**outcome, "embed_seconds": embed_seconds}

    def _set_assignment(self, assignment):
        assignment = np.asarray(assignment, np.int64)
        if assignment.shape != self.labels.shape:
            raise ValueError(
                f"The assignment has {assignment.size} entries for {self.labels.size} labels."
            )
        self.sampler.set_clusters(assignment)
        self.model.set_cluster_assignment(assignment)
        self.assignment = assignment

    def _vectors(self):
        if self._forward is None:
            self._forward = compiled_forward(self.model, features=self.cluster_on == "features")
            # Evaluation-preprocessed training images stay in memory between divisions.
            self._train_inputs = self.train_data
            if hasattr(self.train_data, "as_dataset"):  # an ImageDataset
                self._train_inputs = cached_inputs(
                    self.train_data, self.batch_size, self.image_size
                )
        return embed_training_set(self._forward, self._train_inputs, self.labels, self.batch_size)
