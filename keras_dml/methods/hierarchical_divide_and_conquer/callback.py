"""`HierarchicalDivideAndConquerCallback`: progressive division every E epochs."""

import logging
import time
import warnings

import keras
import numpy as np

from keras_dml.methods.division.clustering import ClusteringError, cluster_nmi
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
    """Drives the progressive division of a `HierarchicalDivideAndConquer` model.

    Training starts with one cluster (all data, one mask). At the start of every epoch
    `e > 0` with `e % division_every == 0` (before the epoch's batches are drawn) it:
    1. embeds the training set (final embedding, Eq. 8, or pooled backbone features);
    2. re-clusters into the current K clusters with k-means and relabels the new clusters after
       the old ones by the Hungarian algorithm on their IoU (Eq. 2-3), so learner k keeps the
       successor of its cluster;
    3. while K < K_max, splits each cluster in two with 2-means (up to `split_attempts` seeds, until
       both children hold 2 classes with 2 samples; a cluster that cannot be split stays whole and
       is logged) and clones the parent's mask into its children (`model.split_learners`), which
       also resets the mask optimizer's state;
    4. hands the assignment to the sampler (`sampler.set_clusters`) and stores it in the model;
    5. with `freeze_backbone=True`, sets the backbone learning rate to 0 for that epoch.
    From `finetune_epoch` on the model trains the final embedding (Sec. 3.3) while batches stay
    inside clusters; re-clustering continues every E epochs.

    A re-clustering for which k-means finds no acceptable partition keeps the previous assignment
    (warning, `hdc_reclustered = 0` in the logs): the epoch then runs on the old clusters instead
    of failing. The only error raised at train begin is a K_max the data cannot support.

    State lives in the model (`recluster_count`, `num_active`, masks and, with
    `num_train_samples`, `cluster_assignment`), so a run resumed from a checkpoint (e.g.
    `keras.callbacks.BackupAndRestore`) continues with the same clusters and learners. Without a
    stored assignment a resumed run re-clusters (no split) at its first epoch, with a warning.

    Args:
        train_data: the training split in the sampler's index order: an `ImageDataset`, an
            unshuffled `tf.data.Dataset` of batched images or `(images, labels)`, or an array.
        labels: 1-D int array aligned with `train_data` and the sampler.
        sampler: object with `set_clusters(assignment)`, e.g. `ClusterMPerClassSampler` (use a
            fixed `epoch_length`: the number of clusters changes during training).
        division_every: int. E, epochs between divisions. Defaults to `2`.
        finetune_epoch: int or `None`. First epoch of the fine-tune stage. Defaults to `None`.
        cluster_on: str. `"embedding"` (Eq. 8 output) or `"features"` (L2-normalised pooled
            backbone features). Defaults to `"embedding"`.
        freeze_backbone: bool. Backbone learning rate 0 for the epoch following each
            re-clustering (reference code). Defaults to `True`.
        split_attempts: int. 2-means seeds tried per cluster. Defaults to `30`.
        niter: int. k-means iterations. Defaults to `100`.
        nredo: int. k-means restarts per attempt. Defaults to `5`.
        similarity: str. `"iou"` (Eq. 3) or `"overlap"`. Defaults to `"iou"`.
        seed: int. Re-clustering n uses seed `seed + 1000 * n`. Defaults to `0`.
        batch_size: int. Batch size of the embedding pass. Defaults to `256`.
        kmeans_backend: str. `"auto"`, `"faiss"` or `"sklearn"`. Defaults to `"auto"`.

    Raises:
        ValueError: at train begin if the training set has fewer than 2 * K_max classes with 2
            or more samples, or `num_train_samples` disagrees with `labels`.

    Examples:
    >>> # sampler = ClusterMPerClassSampler(train.labels, np.zeros(len(train), int), m=4,
    >>> #                                   batch_size=128, epoch_length=len(train) // 128)
    >>> # callback = HierarchicalDivideAndConquerCallback(train, train.labels, sampler)
    >>> # model.fit(train.as_dataset(True, 128, sampler=sampler, with_clusters=True),
    >>> #           epochs=120, callbacks=[callback], shuffle=False)

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
        kmeans_backend="auto",
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
        self.kmeans_options = {"niter": niter, "nredo": nredo, "backend": kmeans_backend}
        self.similarity = similarity
        self.seed = int(seed)
        self.batch_size = int(batch_size)
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
        """Re-clusters (Eq. 2-3), splits while K < K_max, updates sampler and model state.

        Across the workers of a `MultiWorkerMirroredStrategy`, the chief embeds, clusters and
        splits, and every worker receives its assignment and split
        (`keras_dml.models.distribution.from_chief`), so all workers keep the same learners and
        draw the same batches.

        Returns:
            dict: the log entry of this division (also appended to `self.history`).
        """
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
        """Embeds the training set, then re-clusters and splits (the chief's part of `divide`).

        Returns:
            dict of `chief_division.cluster_and_split`, plus `embed_seconds`.
        """
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
                self._train_inputs = cached_inputs(self.train_data, self.batch_size)
        return embed_training_set(self._forward, self._train_inputs, self.labels, self.batch_size)
