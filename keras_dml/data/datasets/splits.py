"""Class splits shared by every loader: train / val / trainval / test (/ query / gallery)."""

import os
import warnings

import numpy as np

from keras_dml.data.file_report import first_few
from keras_dml.data.image_dataset import ImageDataset

SPLITS = ("train", "val", "trainval", "test")
QUERY_GALLERY_SPLITS = ("query", "gallery")


def check_split(split, allowed, name):
    """Raises a `ValueError` naming the valid splits when `split` is not one of `allowed`."""
    if split not in allowed:
        raise ValueError(
            f"Unknown split for dataset `{name}`; choose one of {tuple(allowed)}. "
            f"Received: split={split!r}"
        )


def check_fraction(value, argument):
    """Checks `0 <= value < 1` and returns it as a float."""
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(f"`{argument}` must be in [0, 1). Received: {argument}={value}")
    return float(value)


def holdout_classes(classes, fraction, seed):
    """A seeded `fraction` of `classes` (at least one, never all), sorted, held out as `val`.

    Examples:
    >>> holdout_classes(np.arange(10), 0.2, seed=0).size
    2
    """
    classes = np.unique(np.asarray(classes))
    fraction = check_fraction(fraction, "val_fraction")
    if fraction == 0.0 or classes.size < 2:
        return classes[:0]
    count = min(max(1, int(round(fraction * classes.size))), classes.size - 1)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(classes, size=count, replace=False))


def select_classes(split, train_classes, test_classes, val_fraction, seed, name, present=None):
    """Sorted class ids of `split` from the official partitions (`present`: classes with images)."""
    check_split(split, SPLITS, name)
    if present is not None:
        train_classes = np.intersect1d(train_classes, present)
        test_classes = np.intersect1d(test_classes, present)
    if split == "test":
        return np.unique(test_classes)
    val = holdout_classes(train_classes, val_fraction, seed)
    if split == "val":
        if val.size == 0:
            raise ValueError(
                f"Dataset `{name}` has no validation classes with val_fraction={val_fraction}; "
                "pass val_fraction > 0 (e.g. 0.15)."
            )
        return val
    if split == "trainval":
        return np.unique(train_classes)
    return np.setdiff1d(np.unique(train_classes), val)


def make_split(
    name,
    split,
    raw_labels,
    classes,
    class_names=None,
    paths=None,
    images=None,
    image_size=224,
    resize_size=None,
    verify=True,
    strict_files=False,
):
    """Keeps the images whose raw label is in `classes`, labels remapped to `0..len(classes)-1`.

    `class_names` maps (or a callable takes) a raw id to its name; `paths` or `images` hold the
    images; `image_size`, `resize_size`, `verify` and `strict_files` are `ImageDataset`'s.
    """
    raw_labels = np.asarray(raw_labels)
    classes = np.asarray(classes)
    keep = np.flatnonzero(np.isin(raw_labels, classes))
    if keep.size == 0:
        raise ValueError(f"Dataset `{name}` split `{split}` has no images.")
    order = np.argsort(classes, kind="stable")
    labels = order[np.searchsorted(classes[order], raw_labels[keep])]
    if class_names is None:
        names = [str(c) for c in classes]
    elif callable(class_names):
        names = [class_names(c) for c in classes]
    else:
        names = [class_names[c] for c in classes]
    kwargs = {"paths": [paths[i] for i in keep]} if paths is not None else {"images": images[keep]}
    return ImageDataset(
        labels,
        class_names=names,
        name=name,
        split=split,
        image_size=image_size,
        resize_size=resize_size,
        verify=verify,
        strict_files=strict_files,
        **kwargs,
    )


def keep_out_single_images(dataset):
    """`dataset` without the classes (named in a warning) that unreadable files left one image.

    Raises:
        ValueError: naming the split and its classes when no class keeps 2 images.
    """
    counts = np.bincount(dataset.labels, minlength=dataset.num_classes)
    single = [dataset.class_names[c] for c in np.flatnonzero(counts == 1)]
    if not single:
        return dataset
    where = f"Dataset `{dataset.name}` split `{dataset.split}`"
    if not (counts >= 2).any():
        raise ValueError(
            f"{where} has no class with 2 readable images (a class needs 2 to give a positive "
            f"pair and a retrieval query); one image each: {first_few(single)}. Add images to "
            "them or fix the unreadable files."
        )
    warnings.warn(
        f"{where}: keeping out {len(single)} classes left with a single readable image (a class "
        f"needs 2): {first_few(single)}.",
        UserWarning,
        stacklevel=3,
    )
    kept = dataset.subset(np.flatnonzero(counts[dataset.labels] >= 2))
    kept.skipped_files = list(dataset.skipped_files)
    return kept


def find_root(data_dir, default_dirs, marker, name, how_to_get):
    """The dataset folder holding `marker`: `data_dir`, its sub-folders, or the default places.

    Raises:
        FileNotFoundError: naming every folder searched and `how_to_get`.
    """
    if data_dir is None:
        base = os.environ.get("KERAS_DML_DATA_DIR", os.path.join("~", ".keras", "datasets"))
        bases = [os.path.expanduser(base)]
    else:
        bases = [os.path.expanduser(str(data_dir))]
    candidates = []
    for base in bases:
        candidates.append(base)
        candidates.extend(os.path.join(base, d) for d in default_dirs)
    for root in candidates:
        if os.path.isfile(os.path.join(root, marker)):
            return root
    raise FileNotFoundError(
        f"Dataset `{name}` not found: no `{marker}` in any of {candidates}. {how_to_get} "
        "Pass its folder as `data_dir=` (or set KERAS_DML_DATA_DIR)."
    )


def read_table(path, skip_header=0):
    """Reads a whitespace-separated text table into a list of string rows."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()[skip_header:]
    return [line.split() for line in lines if line.strip()]
