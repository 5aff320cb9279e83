"""CUB-200-2011 (Caltech-UCSD Birds) in its official folder layout."""

import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import find_root, make_split, read_table, select_classes

_HOW_TO_GET = (
    "Download CUB_200_2011.tgz from https://www.vision.caltech.edu/datasets/cub_200_2011/ "
    "and extract it (or use `tfds:caltech_birds2011`)."
)


@register_dataset("cub200", "CUB-200-2011 birds; classes 1-100 train, 101-200 test")
def load_cub200(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    verify=True,
    resize_size=None,
):
    """Loads CUB-200-2011 with classes 1-100 for training and 101-200 for testing.

    Reads `images.txt`, `image_class_labels.txt` and `classes.txt` in `data_dir` (the
    `CUB_200_2011` folder or its parent); class names look like `"001.Black_footed_Albatross"`.

    References:
        Wah et al., "The Caltech-UCSD Birds-200-2011 Dataset", 2011; split of Song et al.,
        "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016.
    """
    root = find_root(data_dir, ("CUB_200_2011",), "images.txt", "cub200", _HOW_TO_GET)
    paths = {
        row[0]: os.path.join(root, "images", row[1])
        for row in read_table(os.path.join(root, "images.txt"))
    }
    labels = {
        row[0]: int(row[1]) for row in read_table(os.path.join(root, "image_class_labels.txt"))
    }
    names = {int(row[0]): row[1] for row in read_table(os.path.join(root, "classes.txt"))}
    ids = sorted(paths, key=int)
    raw = np.array([labels[i] for i in ids], dtype=np.int64)
    all_classes = np.array(sorted(names))
    classes = select_classes(
        split, all_classes[:100], all_classes[100:], val_fraction, seed, "cub200", present=raw
    )
    return make_split(
        "cub200",
        split,
        raw,
        classes,
        class_names=names,
        paths=[paths[i] for i in ids],
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=verify,
    )
