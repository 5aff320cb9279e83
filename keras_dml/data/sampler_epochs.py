"""The epochs of a batch sampler as both input pipelines read them."""

import numpy as np

from keras_dml.data.samplers.epoch_seeds import batch_seed, check_seed


def has_fixed_length(sampler):
    """Whether `sampler.num_batches` never changes (no `"max"` / `"min"` `epoch_length`).

    Examples:
    >>> class Sampler:
    ...     epoch_length = "max"
    >>> has_fixed_length(Sampler())
    False
    """
    epoch_length = getattr(sampler, "epoch_length", None)
    return epoch_length is None or isinstance(epoch_length, (int, np.integer))


class SamplerEpochs:
    """Reads a sampler's epochs as checked `(indices, cluster, batch_seed(seed, epoch, step))`.

    Raises:
        TypeError: the sampler lacks `batch_size`, `num_batches` or `epoch_batches`.

    Examples:
    >>> from keras_dml.data.samplers import MPerClassSampler
    >>> epochs = SamplerEpochs(MPerClassSampler(np.repeat(np.arange(4), 2), 2, 4), 8, 0)
    >>> [(len(i), c) for i, c, _ in epochs.next_epoch()]
    [(4, -1), (4, -1)]
    """

    def __init__(self, sampler, dataset_size, seed):
        for attribute in ("batch_size", "num_batches", "epoch_batches"):
            if not hasattr(sampler, attribute):
                raise TypeError(
                    f"The sampler must have `batch_size`, `num_batches` and `epoch_batches()`; "
                    f"{type(sampler).__name__} has no `{attribute}`."
                )
        self.sampler = sampler
        self.yields_clusters = bool(getattr(sampler, "yields_clusters", False))
        self.dataset_size = int(dataset_size)
        self.seed = check_seed(seed)
        self.epochs_read = 0

    def next_epoch(self):
        """The next epoch's `(int64 indices [B], cluster or -1, int64 seed [2])` batches.

        Raises:
            ValueError: a batch is empty or holds indices outside the dataset.
        """
        epoch = getattr(self.sampler, "epoch", self.epochs_read)
        self.epochs_read += 1
        batches = []
        for step, batch in enumerate(self.sampler.epoch_batches()):
            cluster = -1
            if self.yields_clusters:
                batch, cluster = batch
            indices = np.asarray(batch, dtype=np.int64).reshape(-1)
            self._check(step, indices)
            batches.append((indices, int(cluster), batch_seed(self.seed, epoch, step)))
        return batches

    def _check(self, step, indices):
        if indices.size and indices.min() >= 0 and indices.max() < self.dataset_size:
            return
        raise ValueError(
            f"Sampler batch {step} holds indices outside [0, {self.dataset_size}) or is empty. "
            f"Build the sampler from this dataset's `labels` (after verification). "
            f"Received: {indices.size} indices in "
            f"[{indices.min() if indices.size else None}, "
            f"{indices.max() if indices.size else None}]"
        )
