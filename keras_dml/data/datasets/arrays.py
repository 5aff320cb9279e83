"""`from_arrays`: an `ImageDataset` from in-memory images and labels."""

import numpy as np

from keras_dml.data.datasets.image_folder import split_test_classes
from keras_dml.data.datasets.splits import SPLITS, check_split, make_split, select_classes


def from_arrays(
    images,
    labels,
    split="all",
    class_names=None,
    name="arrays",
    image_size=None,
    resize_size=None,
    test_fraction=0.5,
    val_fraction=0.15,
    seed=0,
):
    """Wraps in-memory images and labels as an `ImageDataset`, optionally split by class.

    Args:
        images: uint8 array `[N, H, W]` or `[N, H, W, C]`, C in {1, 3}.
        labels: 1-D int array `[N]`, any class ids.
        split: str. `"all"`, or `"train"`, `"val"`, `"trainval"`, `"test"` as `image_folder`.
            Defaults to `"all"`.
        class_names: sequence of str, for the sorted label values. Defaults to `None`.
        name: str. Dataset name. Defaults to `"arrays"`.
        image_size: int or (height, width). Defaults to `None` (the stored size).
        resize_size: int. Shorter side before cropping. Defaults to `None`.
        test_fraction: float. Fraction of classes for `"test"`. Defaults to `0.5`.
        val_fraction: float. Fraction of training classes for `"val"`. Defaults to `0.15`.
        seed: int. Seed of the class splits. Defaults to `0`.

    Examples:
    >>> data = from_arrays(np.zeros((4, 8, 8, 3), np.uint8), [3, 3, 7, 7])
    >>> data.labels.tolist(), data.class_names
    ([0, 0, 1, 1], ['3', '7'])
    """
    images = np.asarray(images)
    labels = np.asarray(labels)
    if images.ndim not in (3, 4) or images.dtype != np.uint8:
        raise ValueError(
            "`images` must be a uint8 array [N, H, W] or [N, H, W, C]. "
            f"Received: shape {images.shape}, dtype {images.dtype}"
        )
    if labels.ndim != 1 or len(labels) != len(images):
        raise ValueError(
            f"`labels` must be 1-D with one entry per image ({len(images)}). "
            f"Received: labels with shape {labels.shape}"
        )
    unique = np.unique(labels)
    if class_names is not None and len(class_names) != unique.size:
        raise ValueError(
            f"`class_names` needs one name per distinct label ({unique.size}). "
            f"Received: {len(class_names)} names"
        )
    names = dict(zip(unique.tolist(), class_names if class_names is not None else unique))
    if split == "all":
        classes = unique
    else:
        check_split(split, ("all", *SPLITS), name)
        test = unique[split_test_classes(unique.size, test_fraction, seed)]
        if split == "test" and test.size == 0:
            raise ValueError("There are no test classes with test_fraction=0.")
        classes = select_classes(split, np.setdiff1d(unique, test), test, val_fraction, seed, name)
    return make_split(
        name,
        split,
        labels,
        classes,
        class_names=lambda c: str(names[c.item() if hasattr(c, "item") else c]),
        images=images if images.ndim == 4 else images[..., None],
        image_size=image_size or tuple(images.shape[1:3]),
        resize_size=resize_size,
        verify=False,
    )
