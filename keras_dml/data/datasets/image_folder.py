"""Any images in one sub-folder per class, with a seeded unseen-class train / test split."""

import os
import warnings

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import (
    check_fraction,
    keep_out_single_images,
    make_split,
    select_classes,
)
from keras_dml.data.file_report import first_few, report_ignored

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp")


def scan_image_folder(root):
    """Lists `root/<class>/<image>` files: (class folder names, file paths, class of each file).

    Other files (no image suffix, or outside the class folders) are named in a warning.
    """
    if not os.path.isdir(root):
        raise FileNotFoundError(f"`image_folder` needs an existing folder. Received: {root!r}")
    entries = sorted(os.listdir(root))
    names = [d for d in entries if os.path.isdir(os.path.join(root, d))]
    outside = [os.path.join(root, f) for f in entries if f not in names]
    paths, labels, others = [], [], []
    for index, name in enumerate(names):
        for folder, _, files in sorted(os.walk(os.path.join(root, name))):
            for file in sorted(files):
                if file.lower().endswith(IMAGE_EXTENSIONS):
                    paths.append(os.path.join(folder, file))
                    labels.append(index)
                else:
                    others.append(os.path.join(folder, file))
    if not paths:
        raise FileNotFoundError(
            f"No images ({', '.join(IMAGE_EXTENSIONS)}) in class sub-folders of {root!r}; "
            "expected root/<class name>/<image files>."
        )
    report_ignored("image_folder", others, f"not {' '.join(IMAGE_EXTENSIONS)}")
    report_ignored("image_folder", outside, "outside the class folders")
    return names, paths, np.array(labels, dtype=np.int64)


def classes_with_pairs(names, labels):
    """Class ids with 2 or more images; the others are named in a warning (kept out of splits)."""
    counts = np.bincount(labels, minlength=len(names))
    single = [names[c] for c in np.flatnonzero(counts < 2)]
    if single:
        warnings.warn(
            f"image_folder: keeping {len(single)} classes with fewer than 2 images out of every "
            f"split (a class needs 2 images to give a positive pair): {first_few(single)}.",
            UserWarning,
            stacklevel=3,
        )
    return np.flatnonzero(counts >= 2)


def split_test_classes(num_classes, test_fraction, seed):
    """Seeded choice of `round(test_fraction * num_classes)` test classes (>= 1, < all)."""
    test_fraction = check_fraction(test_fraction, "test_fraction")
    if test_fraction == 0.0:
        return np.array([], dtype=np.int64)
    count = min(max(1, int(round(test_fraction * num_classes))), num_classes - 1)
    rng = np.random.default_rng(seed)
    return np.sort(rng.permutation(num_classes)[:count])


@register_dataset("image_folder", "your images: data_dir/<class>/<image>, seeded class split")
def load_image_folder(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    test_fraction=0.5,
    verify=True,
    resize_size=None,
    strict_files=False,
):
    """Loads images stored as `data_dir/<class name>/<image>` with a seeded unseen-class split.

    Args:
        split: str. `"train"`, `"val"`, `"trainval"` or `"test"`. Defaults to `"train"`.
        data_dir: str. The root folder (required).
        image_size: int or (height, width). Defaults to `None` (224).
        val_fraction: float. Training classes held out as `"val"`. Defaults to `0.15`.
        seed: int. Seed of both class splits. Defaults to `0`.
        test_fraction: float in [0, 1). Fraction of classes for testing. Defaults to `0.5`.
        verify: bool. Check every file and skip unreadable ones. Defaults to `True`.
        resize_size: int. Shorter side before cropping. Defaults to `None`.
        strict_files: bool. Stop at unreadable files instead of skipping them. Defaults to
            `False`.

    Examples:
    >>> train = load_image_folder("train", data_dir="photos/")  # doctest: +SKIP
    """
    if data_dir is None:
        raise ValueError(
            "`image_folder` needs `data_dir=`, a folder with one sub-folder per class."
        )
    root = os.path.expanduser(str(data_dir))
    names, paths, raw = scan_image_folder(root)
    present = classes_with_pairs(names, raw)
    if present.size == 0:
        raise ValueError(f"No class folder of {root!r} has 2 images; put 2 or more in each.")
    test = present[split_test_classes(present.size, test_fraction, seed)]
    if split == "test" and test.size == 0:
        raise ValueError("There are no test classes with test_fraction=0; pass test_fraction > 0.")
    train = np.setdiff1d(present, test)
    classes = select_classes(split, train, test, val_fraction, seed, "image_folder")
    dataset = make_split(
        "image_folder",
        split,
        raw,
        classes,
        class_names=names,
        paths=paths,
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=verify,
        strict_files=strict_files,
    )
    return keep_out_single_images(dataset)
