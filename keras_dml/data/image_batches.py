"""`ImageBatches`: the `keras.utils.PyDataset` of `make_py_dataset`, one epoch at a time."""

import multiprocessing
import warnings
import weakref
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import keras
import numpy as np

from keras_dml.data.batch_loading import load_in_worker, start_worker


class ImageBatches(keras.utils.PyDataset):
    """A `keras.utils.PyDataset` serving one epoch's image batches, loaded by its own workers.

    Built by `make_py_dataset` from `epochs` (`SamplerEpochs` or `IndexEpochs`), a `BatchLoader`
    and the labels. Outside `fit`, `batches[step]` serves the current epoch and `on_epoch_end()`
    moves on.
    """

    def __init__(
        self,
        epochs,
        num_batches,
        loader,
        labels,
        with_clusters=False,
        batch_augmentation=None,
        workers=0,
    ):
        # Keras' own workers start before `on_epoch_begin` draws the epoch: keep workers=1.
        super().__init__()
        self._epochs = epochs
        self._num_batches = int(num_batches)
        self._loader = loader
        self._labels = labels
        self._with_clusters = with_clusters
        self._batch_augmentation = batch_augmentation
        self._pool_size = workers
        self._pool = None
        self._plan = None
        self._pending = {}
        self._last_step = -1

    @property
    def num_batches(self):
        return self._num_batches

    def __len__(self):
        return self._num_batches

    def on_epoch_begin(self):
        self._read_epoch()

    def on_epoch_end(self):
        for future in self._pending.values():
            future.cancel()
        self._pending = {}
        self._last_step = -1
        self._plan = None

    def __getitem__(self, step):
        if not 0 <= step < self._num_batches:
            raise IndexError(f"Batch {step} of an epoch of {self._num_batches} batches.")
        if self._plan is None:
            self._read_epoch()
        indices, cluster, _ = self._plan[step % len(self._plan)]
        pixels, kept, failures = self._load(step)
        images = pixels.astype(np.float32)
        if failures:
            warnings.warn(
                f"Skipping {len(failures)} image file(s) of batch {step} that cannot be "
                f"decoded: {'; '.join(failures[:3])}. Run `dataset.verify()` to drop them.",
                stacklevel=2,
            )
        if self._batch_augmentation is not None:
            images = self._batch_augmentation(images)
        labels = self._labels[indices[kept]]
        if self._with_clusters:
            return images, {"labels": labels, "clusters": np.full(len(labels), cluster, np.int32)}
        return images, labels

    def _read_epoch(self):
        self.on_epoch_end()
        self._plan = self._epochs.next_epoch()
        if len(self._plan) != self._num_batches:
            effect = "the last are dropped" if len(self._plan) > self._num_batches else "repeats"
            warnings.warn(
                f"The sampler gave {len(self._plan)} batches this epoch but the pipeline serves "
                f"{self._num_batches} per epoch (its count when built), so the epoch {effect}. "
                "Give the sampler an int `epoch_length` for a fixed count.",
                stacklevel=2,
            )

    def _load(self, step):
        indices, _, seed_words = self._plan[step % len(self._plan)]
        if self._pool_size == 0:
            return self._loader.load(indices, seed_words)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self._pool_size,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,
                initargs=(self._loader,),
            )
            weakref.finalize(self, self._pool.shutdown, wait=False, cancel_futures=True)
        # Load ahead only while Keras asks in order (`fit(shuffle=True)` asks at random: then
        # each batch alone, so at most a window of batches waits in memory).
        window = 2 * self._pool_size if step == self._last_step + 1 else 1
        self._last_step = step
        for ahead in range(step, min(step + window, self._num_batches)):
            if ahead not in self._pending:
                ahead_indices, _, ahead_seed = self._plan[ahead % len(self._plan)]
                self._pending[ahead] = self._pool.submit(load_in_worker, ahead_indices, ahead_seed)
        try:
            return self._pending.pop(step).result()
        except BrokenProcessPool as error:
            # A worker could not start, e.g. a script read from stdin, which "spawn" cannot
            # re-import: load in this process from now on, and say so.
            warnings.warn(
                f"The PyDataset's worker processes stopped ({error}); loading images in the "
                "main process from now on. Run the script from a file, or pass "
                "`num_parallel_calls=0` to load in the main process.",
                stacklevel=2,
            )
            self._pending = {}
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool, self._pool_size = None, 0
            return self._loader.load(indices, seed_words)
