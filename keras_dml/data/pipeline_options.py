"""`PipelineOptions`: what an input pipeline is asked for, for `tf.data` and the PyDataset alike."""

import dataclasses
from typing import Any

import numpy as np

from keras_dml.data.transform_options import check_augmentation, image_size_hw


@dataclasses.dataclass(frozen=True)
class PipelineOptions:
    """The options of an input pipeline (`ImageDataset.as_dataset`, `make_tf_dataset`, ...).

    Args:
        training: bool. Augment, and by default shuffle and drop the last partial batch.
            Defaults to `False`.
        batch_size: int. Images per batch without a sampler. Defaults to `32`.
        sampler: batch sampler; batches then follow it. Defaults to `None`.
        image_size: int or (height, width). Crop size. Defaults to `None` (the dataset's).
        resize_size: int. Shorter side before cropping. Defaults to `None` (the dataset's).
        shuffle: bool. Shuffle without a sampler. Defaults to `None` (`training`).
        seed: int. Seed of shuffling and augmentation. Defaults to `None` (unseeded).
        num_parallel_calls: int. Decode calls (`tf.data`) or worker processes (PyDataset).
            Defaults to `None` (AUTOTUNE; `min(4, os.cpu_count())`).
        with_clusters: bool. Yield `(images, {"labels", "clusters"})`. Defaults to `False`.
        augmentation: str or callable. A name of `AUGMENTATIONS` or a Keras preprocessing
            pipeline. Defaults to `None` (the dataset's).
        drop_remainder: bool. Drop the last partial batch. Defaults to `None` (`training`).
    """

    training: bool = False
    batch_size: int = 32
    sampler: Any = None
    image_size: Any = None
    resize_size: int | None = None
    shuffle: bool | None = None
    seed: int | None = None
    num_parallel_calls: int | None = None
    with_clusters: bool = False
    augmentation: Any = None
    drop_remainder: bool | None = None

    def resolve(self, dataset):
        """These options checked against `dataset` (files verified), its defaults filled in.

        Raises:
            ValueError: an unknown augmentation, a bad `batch_size` or `image_size`,
                `with_clusters` without a cluster sampler, or an empty dataset.
        """
        augmentation = self.augmentation
        if augmentation is None:
            augmentation = getattr(dataset, "augmentation", None) or "crop_flip"
        check_augmentation(augmentation)
        size = self.batch_size
        if self.sampler is None and (not isinstance(size, int | np.integer) or size < 1):
            raise ValueError(f"`batch_size` must be a positive int. Received: batch_size={size}")
        if self.with_clusters and not getattr(self.sampler, "yields_clusters", False):
            raise ValueError(
                "`with_clusters=True` needs a cluster-conditioned sampler (one with "
                "`yields_clusters=True`, e.g. ClusterMPerClassSampler). Received: "
                f"sampler={type(self.sampler).__name__ if self.sampler is not None else None}"
            )
        if len(dataset) == 0:
            raise ValueError(f"{dataset!r} has no images; nothing to build a pipeline from.")
        dataset.verify()
        return dataclasses.replace(
            self,
            image_size=image_size_hw(self.image_size or dataset.image_size),
            resize_size=self.resize_size or dataset.resize_size,
            shuffle=self.training if self.shuffle is None else self.shuffle,
            drop_remainder=self.training if self.drop_remainder is None else self.drop_remainder,
            augmentation=augmentation,
        )

    @property
    def image_augmentation(self):
        """The augmentation name of each image: `None` (evaluation transform) unless training."""
        if not self.training:
            return None
        return "none" if callable(self.augmentation) else self.augmentation

    @property
    def batch_augmentation(self):
        """The callable applied to each training batch, or `None`."""
        return self.augmentation if self.training and callable(self.augmentation) else None


def check_batch_shape(shape, crop_hw):
    """Raises unless a batch augmentation kept the probe batch's shape `[2, H, W, 3]`."""
    if tuple(shape) != (2, crop_hw[0], crop_hw[1], 3):
        raise ValueError(
            "The `augmentation` pipeline must keep the batch shape [B, "
            f"{crop_hw[0]}, {crop_hw[1]}, 3] (the model's input); resize inside it or pass "
            f"`image_size=`. Received: output shape {tuple(shape)} for [2, {crop_hw[0]}, "
            f"{crop_hw[1]}, 3]"
        )
