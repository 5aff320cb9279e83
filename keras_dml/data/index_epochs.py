"""The epochs of a pipeline without a sampler: every index, shuffled anew each epoch."""

import numpy as np

from keras_dml.data.samplers.epoch_seeds import batch_seed, check_seed, epoch_generator


class IndexEpochs:
    """All indices in batches, shuffled from `(seed, epoch)` when `shuffle` (no sampler).

    Examples:
    >>> [i.tolist() for i, _, _ in IndexEpochs(5, 2, False, False, 0).next_epoch()]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, size, batch_size, shuffle, drop_remainder, seed):
        self.size, self.batch_size = int(size), int(batch_size)
        self.shuffle, self.drop_remainder = bool(shuffle), bool(drop_remainder)
        self.seed = check_seed(seed)
        self.epochs_read = 0
        whole = self.size // self.batch_size
        self.num_batches = whole if drop_remainder else -(-self.size // self.batch_size)
        if self.num_batches == 0:
            raise ValueError(
                f"{self.size} images make no full batch of {self.batch_size}: pass a smaller "
                "`batch_size` or `drop_remainder=False`."
            )

    def next_epoch(self):
        """The next epoch's batches: a list of `(int64 indices, -1, int64 seed [2])`."""
        epoch = self.epochs_read
        self.epochs_read += 1
        order = np.arange(self.size, dtype=np.int64)
        if self.shuffle:
            order = epoch_generator(self.seed, epoch).permutation(order)
        return [
            (
                order[step * self.batch_size : (step + 1) * self.batch_size],
                -1,
                batch_seed(self.seed, epoch, step),
            )
            for step in range(self.num_batches)
        ]
