"""Class splits shared by every dataset loader: train / val / trainval / test (/ query / gallery).

Metric learning evaluates on classes never seen in training. Every loader therefore splits its
*classes*: the official protocol fixes the training and test classes, and a seeded fraction of the
training classes is held out as `val` for model selection. `train` is the training classes minus
`val`, `trainval` is all of them. Test classes are never used for model selection (the reference
implementations picked checkpoints on test Recall@1; choosing on `val` avoids that leak).
"""

import os

import numpy as np

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
    """Picks a seeded `fraction` of `classes` (at least one, never all) for held-out validation.

    Args:
        classes: 1-D array of class ids.
        fraction: float in [0, 1). `0` holds out nothing.
        seed: int. Seed of the choice.

    Returns:
        Sorted numpy array of the held-out class ids.

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
    """Returns the class ids of `split` ("train", "val", "trainval" or "test").

    Args:
        split: str. The requested split.
        train_classes: 1-D array. Classes of the official training partition.
        test_classes: 1-D array. Classes of the official test partition.
        val_fraction: float. Fraction of training classes held out as `val`.
        seed: int. Seed of the held-out choice.
        name: str. Dataset name for error messages.
        present: 1-D array. Classes that have images; the others are dropped before the
            held-out choice. Defaults to `None` (all given classes).

    Returns:
        Sorted numpy array of class ids.
    """
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
):
    """Keeps the images whose raw label is in `classes` and remaps labels to `0..len(classes)-1`.

    Args:
        name: str. Dataset name.
        split: str. Split name.
        raw_labels: 1-D array. The dataset's own label of every image.
        classes: 1-D array. Raw class ids of this split, in label order.
        class_names: mapping or callable raw id -> name. Defaults to `None` (`str(id)`).
        paths: sequence of str. Image files (one of `paths` / `images`). Defaults to `None`.
        images: uint8 array. In-memory images. Defaults to `None`.
        image_size: int or (height, width). Default crop size. Defaults to `224`.
        resize_size: int. Default shorter side. Defaults to `None`.
        verify: bool. Check the files now (`ImageDataset.verify`). Defaults to `True`.

    Returns:
        `ImageDataset`.
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
        **kwargs,
    )


def find_root(data_dir, default_dirs, marker, name, how_to_get):
    """Finds the dataset folder holding `marker`, trying `data_dir` and its sub-folders.

    Args:
        data_dir: str or None. Folder given by the user; `None` searches
            `$KERAS_DML_DATA_DIR` (else `~/.keras/datasets`) joined with each of `default_dirs`.
        default_dirs: sequence of str. Usual folder names of the dataset.
        marker: str. A file (relative path) that the dataset root contains.
        name: str. Dataset name for the error message.
        how_to_get: str. Where to download the dataset, for the error message.

    Returns:
        str: the dataset root.

    Raises:
        FileNotFoundError: naming every folder searched.
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
