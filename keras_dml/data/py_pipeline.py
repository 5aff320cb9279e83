"""The input pipeline without TensorFlow: a `keras.utils.PyDataset` of NumPy batches.

`make_py_dataset` takes the arguments of `keras_dml.data.pipeline.make_tf_dataset` and keeps
its batch contract (float32 images `[B, H, W, 3]` in [0, 255], int32 labels, `{"labels",
"clusters"}` with `with_clusters`); `ImageDataset.as_dataset` picks it on the JAX and PyTorch
backends. The samplers, the epoch a batch belongs to and its seed come from the same code as the
`tf.data` path (`keras_dml.data.sampler_epochs`); the transforms are NumPy/PIL
(`keras_dml.data.numpy_preprocessing`, within 1 grey level of the `tf.data` ones).

Why `keras.utils.PyDataset` and not grain: `model.fit` takes a PyDataset on every backend with
no extra dependency (grain is not a dependency of keras-dml and was not installed to measure),
and the work of a batch (PIL decode and resize, a crop) is the same whichever schedules it.
Measured with `python benchmarks/input_pipeline.py --images 256 --epochs 2 --workers 2`
(benchmarks/results/input_pipeline.json, a shared 2-core machine at load average 6, so rough):
images/s of one `MPerClassSampler` epoch, tf.data vs this PyDataset: in-memory digits 2379 vs
20447 at 32 px and 413 vs 889 at 224 px; JPEG files (256 px, crop + flip) 679 vs 751 at 32 px
and 299 vs 532 at 224 px. Workers send uint8 batches back (a quarter of float32's bytes).

Why a pool of its own rather than PyDataset's `workers=`: Keras starts its worker processes
(and forks the dataset into them) before it calls `on_epoch_begin`, so the epoch's batches,
drawn from the sampler at that point, could not reach them; and it would re-create the
processes every epoch. `ImageBatches` therefore leaves Keras' `workers=1` (no enqueuer: Keras
asks for batches in order, in the main process) and loads image files in `workers` processes
of its own ("spawn": nothing of the backend is forked), kept for the whole run, a few batches
ahead of the one Keras asks for. In-memory arrays are transformed in the main process.

Epochs: `on_epoch_begin` (Keras calls it after the callbacks' `on_epoch_begin`, so after
`SamplerEpochCallback` set the sampler's epoch) reads the epoch's batches; `on_epoch_end`
drops them. Batch order: Keras shuffles the batch order of a PyDataset when `fit` gets
`shuffle=True` (its default); the sampler already shuffles, so pass `shuffle=False` for the
exact batch order of the `tf.data` path (the batches themselves do not change).
"""

import multiprocessing
import os
import warnings
import weakref
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import keras
import numpy as np

from keras_dml.data.batch_loading import BatchLoader, load_in_worker, start_worker
from keras_dml.data.sampler_epochs import SamplerEpochs
from keras_dml.data.samplers.epoch_seeds import batch_seed, check_seed, epoch_generator
from keras_dml.data.transform_options import checked_pipeline_arguments, image_size_hw


def make_py_dataset(
    dataset,
    training=False,
    batch_size=32,
    sampler=None,
    image_size=None,
    resize_size=None,
    shuffle=None,
    seed=None,
    num_parallel_calls=None,
    with_clusters=False,
    augmentation=None,
    drop_remainder=None,
):
    """Builds a `keras.utils.PyDataset` of batches from an `ImageDataset` (no TensorFlow).

    Arguments and batches as `keras_dml.data.pipeline.make_tf_dataset`. Files are checked with
    `dataset.verify()` first (missing or corrupt ones reported and skipped); a file that still
    fails to decode is left out of its batch with a warning.

    Args:
        dataset: `ImageDataset`.
        training: bool. Random augmentation when `True`, resize + center crop otherwise.
            Defaults to `False`.
        batch_size: int. Images per batch when no sampler is given. Defaults to `32`.
        sampler: batch sampler (`batch_size`, `num_batches`, `epoch_batches()`). Defaults to
            `None`.
        image_size: int or (height, width). Defaults to `None` (`dataset.image_size`).
        resize_size: int. Shorter side before cropping. Defaults to `None`.
        shuffle: bool. Shuffle (no sampler), anew each epoch from `(seed, epoch)`.
            Defaults to `None` (`training`).
        seed: int. Seed of shuffling and augmentation: batch `step` of epoch `epoch` draws
            from `batch_seed(seed, epoch, step)`. Defaults to `None` (unseeded).
        num_parallel_calls: int. Worker processes decoding image files; `0` decodes in the
            main process. Defaults to `None` (`min(4, os.cpu_count())`). In-memory images
            use none.
        with_clusters: bool. Yield `(images, {"labels": int32 [B], "clusters": int32 [B]})`;
            needs a sampler with `yields_clusters=True`. Defaults to `False`.
        augmentation: str or callable. A name of `AUGMENTATIONS` (per image) or a Keras
            preprocessing pipeline applied with `training=True` to every float32 batch after
            the evaluation transform. Ignored when `training=False`. Defaults to `None`
            (`dataset.augmentation`).
        drop_remainder: bool. Drop the last partial batch (no sampler). Defaults to `None`
            (`training`).

    Returns:
        `ImageBatches` (a `keras.utils.PyDataset`) of `(images float32 [B, H, W, 3] in
        [0, 255], labels int32 [B])` NumPy batches.

    Examples:
    >>> from keras_dml.data.image_dataset import ImageDataset
    >>> data = ImageDataset([0, 1, 1], images=np.zeros((3, 8, 8, 1), np.uint8), image_size=8)
    >>> batches = make_py_dataset(data, batch_size=2)
    >>> [len(batches[step][1]) for step in range(len(batches))]
    [2, 1]
    """
    augmentation = checked_pipeline_arguments(
        dataset, batch_size, sampler, with_clusters, augmentation
    )
    crop_hw = image_size_hw(image_size or dataset.image_size)
    per_image = None
    batch_augmentation = None
    if training:
        per_image = augmentation
        if callable(augmentation):
            batch_augmentation = _checked_batch_augmentation(augmentation, crop_hw)
            per_image = "none"
    loader = BatchLoader(
        dataset.images, dataset.paths, crop_hw, resize_size or dataset.resize_size, per_image
    )
    if sampler is None:
        drop = training if drop_remainder is None else drop_remainder
        shuffled = training if shuffle is None else shuffle
        epochs = IndexEpochs(len(dataset), batch_size, shuffled, drop, seed)
        num_batches = epochs.num_batches
    else:
        epochs = SamplerEpochs(sampler, len(dataset), seed)
        num_batches = sampler.num_batches
    workers = 0
    if not dataset.in_memory:
        workers = min(4, os.cpu_count() or 1) if num_parallel_calls is None else num_parallel_calls
    return ImageBatches(
        epochs,
        num_batches,
        loader,
        dataset.labels.astype(np.int32),
        with_clusters=with_clusters,
        batch_augmentation=batch_augmentation,
        workers=int(workers),
    )


class IndexEpochs:
    """The epochs of a pipeline without a sampler: all indices, shuffled from `(seed, epoch)`.

    Same batches as `SamplerEpochs.next_epoch()`: `(indices, -1, batch_seed(seed, epoch, step))`.

    Args:
        size: int. Images in the dataset.
        batch_size: int. Images per batch.
        shuffle: bool. Whether each epoch permutes the indices.
        drop_remainder: bool. Whether the last partial batch is dropped.
        seed: int or `None`.

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


class ImageBatches(keras.utils.PyDataset):
    """A `keras.utils.PyDataset` serving one epoch's image batches at a time.

    Built by `make_py_dataset`; see this module's docstring for epochs and workers. Outside
    `fit`, `batches[step]` serves the current epoch (read at the first access) and
    `on_epoch_end()` moves on to the next.

    Args:
        epochs: `SamplerEpochs` or `IndexEpochs`: where each epoch's batches come from.
        num_batches: int. Batches per epoch that Keras is told.
        loader: `BatchLoader`.
        labels: int32 array `[N]`.
        with_clusters: bool. Targets as `{"labels", "clusters"}`. Defaults to `False`.
        batch_augmentation: callable or `None`. NumPy batch -> NumPy batch. Defaults to `None`.
        workers: int. Worker processes loading batches (`0`: the main process). Defaults to `0`.
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
        super().__init__()  # workers=1, no Keras enqueuer: batches come in order, here
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


def _checked_batch_augmentation(augmentation, crop_hw):
    """Wraps a user pipeline as `float32 batch -> float32 NumPy batch`, its shape checked once."""

    def apply(images):
        if isinstance(augmentation, keras.layers.Layer):
            out = augmentation(images, training=True)
        else:
            out = augmentation(images)
        return np.asarray(keras.ops.convert_to_numpy(out), np.float32)

    probe = apply(np.zeros([2, crop_hw[0], crop_hw[1], 3], np.float32))
    if probe.shape != (2, crop_hw[0], crop_hw[1], 3):
        raise ValueError(
            "The `augmentation` pipeline must keep the batch shape [B, "
            f"{crop_hw[0]}, {crop_hw[1]}, 3] (the model's input); resize inside it or pass "
            f"`image_size=`. Received: output shape {probe.shape} for [2, {crop_hw[0]}, "
            f"{crop_hw[1]}, 3]"
        )
    return apply
