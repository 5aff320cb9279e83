"""The input pipeline without TensorFlow: a `keras.utils.PyDataset` of NumPy batches."""

import os

import keras
import numpy as np

from keras_dml.data.batch_loading import BatchLoader
from keras_dml.data.image_batches import ImageBatches
from keras_dml.data.index_epochs import IndexEpochs
from keras_dml.data.pipeline_options import PipelineOptions, check_batch_shape
from keras_dml.data.sampler_epochs import SamplerEpochs


def make_py_dataset(dataset, options=None):
    """Builds a `keras.utils.PyDataset` of batches from an `ImageDataset` (no TensorFlow).

    Args:
        dataset: `ImageDataset`.
        options: `PipelineOptions`. Defaults to `None` (`PipelineOptions()`).

    Returns:
        `ImageBatches` (a `keras.utils.PyDataset`) of `(images float32 [B, H, W, 3] in
        [0, 255], labels int32 [B])` NumPy batches.

    Examples:
    >>> from keras_dml.data.image_dataset import ImageDataset
    >>> data = ImageDataset([0, 1, 1], images=np.zeros((3, 8, 8, 1), np.uint8), image_size=8)
    >>> batches = make_py_dataset(data, PipelineOptions(batch_size=2))
    >>> [len(batches[step][1]) for step in range(len(batches))]
    [2, 1]
    """
    options = (options or PipelineOptions()).resolve(dataset)
    crop_hw = options.image_size
    batch_augmentation = options.batch_augmentation
    if batch_augmentation is not None:
        batch_augmentation = _checked_batch_augmentation(batch_augmentation, crop_hw)
    loader = BatchLoader(
        dataset.images, dataset.paths, crop_hw, options.resize_size, options.image_augmentation
    )
    if options.sampler is None:
        epochs = IndexEpochs(
            len(dataset), options.batch_size, options.shuffle, options.drop_remainder, options.seed
        )
        num_batches = epochs.num_batches
    else:
        epochs = SamplerEpochs(options.sampler, len(dataset), options.seed)
        num_batches = options.sampler.num_batches
    workers = options.num_parallel_calls
    if dataset.in_memory:
        workers = 0
    elif workers is None:
        workers = min(4, os.cpu_count() or 1)
    return ImageBatches(
        epochs,
        num_batches,
        loader,
        dataset.labels.astype(np.int32),
        with_clusters=options.with_clusters,
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

    check_batch_shape(apply(np.zeros([2, crop_hw[0], crop_hw[1], 3], np.float32)).shape, crop_hw)
    return apply
