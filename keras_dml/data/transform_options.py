"""The choices of the input transforms, shared by the `tf.data` and the NumPy pipelines.

Augmentation names, crop size and shorter-side size are validated here, with no TensorFlow, so
`ImageDataset` and the backend-free pipeline (`keras_dml.data.py_pipeline`) use them too.
"""

import numpy as np

AUGMENTATIONS = ("none", "flip", "crop", "crop_flip", "resized_crop", "resized_crop_flip")


def check_augmentation(augmentation):
    """Returns `augmentation` if it is one of `AUGMENTATIONS` or a callable, else raises.

    Args:
        augmentation: str or callable. A name, or a Keras preprocessing pipeline (e.g. a
            `keras.Sequential` of `keras.layers.RandomRotation`, ...) / any callable mapping a
            float32 batch `[B, H, W, 3]` in [0, 255] to a batch of the same shape.

    Returns:
        The argument unchanged.

    Raises:
        ValueError: an unknown name or another type.

    Examples:
    >>> check_augmentation("flip")
    'flip'
    """
    if callable(augmentation) or augmentation in AUGMENTATIONS:
        return augmentation
    raise ValueError(
        f"Unknown `augmentation`; choose one of {AUGMENTATIONS} or pass a Keras preprocessing "
        f"pipeline (e.g. keras.Sequential([keras.layers.RandomRotation(0.05)])). "
        f"Received: augmentation={augmentation!r}"
    )


def image_size_hw(image_size):
    """Returns `image_size` (int or (height, width)) as a validated `(height, width)` tuple."""
    if isinstance(image_size, int | float):
        image_size = (image_size, image_size)
    size = tuple(int(s) for s in image_size)
    if len(size) != 2 or min(size) < 1:
        raise ValueError(
            "`image_size` must be a positive int or (height, width). "
            f"Received: image_size={image_size}"
        )
    return size


def default_resize_size(image_size):
    """Shorter-side size before cropping: 256 for 224 crops, scaled proportionally.

    Args:
        image_size: int or (height, width). The crop size.

    Returns:
        int: `round(max(height, width) * 256 / 224)`.

    Examples:
    >>> default_resize_size(224), default_resize_size(32)
    (256, 37)
    """
    return int(round(max(image_size_hw(image_size)) * 256 / 224))


def checked_resize_size(crop_hw, resize_size):
    """Returns the shorter-side size: `resize_size`, or the default for `crop_hw` when `None`."""
    if resize_size is None:
        return default_resize_size(crop_hw)
    if int(resize_size) < max(crop_hw):
        raise ValueError(
            "`resize_size` (shorter side before cropping) must be at least the crop size "
            f"{max(crop_hw)}. Received: resize_size={resize_size}"
        )
    return int(resize_size)


def checked_pipeline_arguments(dataset, batch_size, sampler, with_clusters, augmentation):
    """The checks both input pipelines (tf.data and the PyDataset) run before building.

    Refuses, in one line each, an invalid `augmentation`, a `batch_size` that is not a positive
    int (without a sampler), `with_clusters` without a cluster-conditioned sampler and an empty
    dataset; then verifies the dataset's files (`dataset.verify()`).

    Args:
        dataset: the `ImageDataset`.
        batch_size: int. Batch size without a sampler.
        sampler: batch sampler or `None`.
        with_clusters: bool.
        augmentation: str, callable or `None` (the dataset's, else `"crop_flip"`).

    Returns:
        The augmentation to apply.
    """
    if augmentation is None:
        augmentation = getattr(dataset, "augmentation", None) or "crop_flip"
    check_augmentation(augmentation)
    if sampler is None and (not isinstance(batch_size, int | np.integer) or batch_size < 1):
        raise ValueError(f"`batch_size` must be a positive int. Received: batch_size={batch_size}")
    if with_clusters and not getattr(sampler, "yields_clusters", False):
        raise ValueError(
            "`with_clusters=True` needs a cluster-conditioned sampler (one with "
            "`yields_clusters=True`, e.g. ClusterMPerClassSampler). "
            f"Received: sampler={type(sampler).__name__ if sampler is not None else None}"
        )
    if len(dataset) == 0:
        raise ValueError(f"{dataset!r} has no images; nothing to build a pipeline from.")
    dataset.verify()
    return augmentation
