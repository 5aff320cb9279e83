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

`ImageBatches` (`keras_dml.data.image_batches`: its worker processes, its epochs) serves the
batches; without a sampler, `IndexEpochs` (`keras_dml.data.index_epochs`) plans the epochs.
"""

import os

import keras
import numpy as np

from keras_dml.data.batch_loading import BatchLoader
from keras_dml.data.image_batches import ImageBatches
from keras_dml.data.index_epochs import IndexEpochs
from keras_dml.data.sampler_epochs import SamplerEpochs
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
