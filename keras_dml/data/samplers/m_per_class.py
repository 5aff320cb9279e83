"""`MPerClassSampler`: class-balanced batches of P classes x m images."""

import warnings

import numpy as np

from keras_dml.data.file_report import first_few
from keras_dml.data.samplers._class_pool import (
    ClassPool,
    group_by_class,
    validate_batch_shape,
    validate_labels,
)
from keras_dml.data.samplers.epoch_seeds import check_epoch, check_seed, epoch_generator


class MPerClassSampler:
    """Class-balanced batch sampler: each batch is `batch_size / m` classes x `m` images.

    Seeded and deterministic; the sampling rules are in docs/data.md.

    Args:
        labels: 1-D int array. The class id of every sample of the split.
        m: int. Images per class in a batch.
        batch_size: int. Images per batch; a multiple of `m`.
        seed: int or `None`. Seed of every epoch's generator (`None`: random). Defaults to `0`.
        num_batches: int or `None`. Batches per epoch. Defaults to `None` (usable samples //
            `batch_size`, at least 1).

    Raises:
        ValueError: `batch_size` is not a multiple of `m`, or fewer than `batch_size / m` classes
            have 2 images.

    Examples:
    >>> labels = np.repeat(np.arange(10), 4)
    >>> sampler = MPerClassSampler(labels, m=2, batch_size=8, seed=0)
    >>> batches = sampler.epoch_batches()
    >>> len(batches), batches[0].shape
    (5, (8,))

    References:
        Musgrave et al., "A Metric Learning Reality Check", ECCV 2020 (m-per-class sampling).
    """

    yields_clusters = False

    def __init__(self, labels, m, batch_size, seed=0, num_batches=None):
        self.labels = validate_labels(labels)
        self.classes_per_batch = validate_batch_shape(m, batch_size)
        self.m = int(m)
        self.batch_size = int(batch_size)
        self.seed = seed
        self._seed = check_seed(seed)
        self.epoch = 0
        classes, groups = group_by_class(np.arange(self.labels.size), self.labels)
        usable = [i for i, group in enumerate(groups) if group.size >= 2]
        self.num_excluded_classes = len(groups) - len(usable)
        self.num_usable_classes = len(usable)
        if self.num_excluded_classes:
            single = [int(c) for c, group in zip(classes, groups) if group.size < 2]
            warnings.warn(
                f"MPerClassSampler: {self.num_excluded_classes} of {len(groups)} classes have a "
                "single image and are excluded (a class needs 2 images to give a positive pair): "
                f"labels {first_few(single)}.",
                UserWarning,
                stacklevel=2,
            )
        if self.num_usable_classes < self.classes_per_batch:
            raise ValueError(
                "MPerClassSampler needs at least batch_size / m = "
                f"{self.classes_per_batch} classes with 2 or more images to form one batch, but "
                f"the split has {self.num_usable_classes} (of {len(groups)} classes). Use a "
                "smaller batch_size or a larger m. "
                f"Received: batch_size={self.batch_size}, m={self.m}."
            )
        self.usable_classes = classes[usable]
        self._pool = ClassPool([groups[i] for i in usable], self.m)
        self.num_usable_samples = self._pool.num_samples
        if num_batches is None:
            num_batches = max(1, self.num_usable_samples // self.batch_size)
        elif not isinstance(num_batches, (int, np.integer)) or num_batches < 1:
            raise ValueError(
                "`num_batches` must be a positive integer or None. "
                f"Received: num_batches={num_batches!r}"
            )
        self.num_batches = int(num_batches)
        self._cycles_epoch = 0  # the epoch whose start the pool's cycles are at

    def set_epoch(self, epoch):
        """Makes the next `epoch_batches()` call draw epoch `epoch` (int >= 0)."""
        self.epoch = check_epoch(epoch)

    def epoch_batches(self, epoch=None):
        """Returns one epoch: a list of `num_batches` 1-D int64 index arrays.

        Args:
            epoch: int or `None`. The epoch to draw. Defaults to `None` (`self.epoch`, then next).
        """
        epoch = self.epoch if epoch is None else check_epoch(epoch)
        self.epoch = epoch + 1
        if epoch < self._cycles_epoch:
            self._pool.reset()
            self._cycles_epoch = 0
        while self._cycles_epoch < epoch:  # a jump (a resumed run): replay the skipped epochs
            self._draw_epoch()
        return self._draw_epoch()

    def _draw_epoch(self):
        """Draws epoch `self._cycles_epoch` from the pool's cycles and moves on to the next."""
        rng = epoch_generator(self._seed, self._cycles_epoch)
        self._cycles_epoch += 1
        return [self._pool.draw(rng, self.classes_per_batch) for _ in range(self.num_batches)]

    def __len__(self):
        return self.num_batches

    def __iter__(self):
        return iter(self.epoch_batches())

    def __repr__(self):
        return (
            f"MPerClassSampler(classes={self.num_usable_classes}, m={self.m}, "
            f"batch_size={self.batch_size}, num_batches={self.num_batches}, seed={self.seed})"
        )
