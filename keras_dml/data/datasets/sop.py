"""Stanford Online Products (SOP) in its official layout (`Ebay_train.txt`, `Ebay_test.txt`)."""

import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import (
    SPLITS,
    check_split,
    find_root,
    make_split,
    read_table,
    select_classes,
)

_HOW_TO_GET = (
    "Download Stanford_Online_Products.zip (https://cvgl.stanford.edu/projects/lifted_struct/) "
    "and extract it (or use `tfds:stanford_online_products`)."
)


def read_ebay_list(root, filename):
    """Reads `Ebay_train.txt` / `Ebay_test.txt`: (paths, class ids, super-class ids)."""
    rows = read_table(os.path.join(root, filename), skip_header=1)
    paths = [os.path.join(root, row[3]) for row in rows]
    classes = np.array([int(row[1]) for row in rows], dtype=np.int64)
    super_classes = np.array([int(row[2]) for row in rows], dtype=np.int64)
    return paths, classes, super_classes


@register_dataset("sop", "Stanford Online Products; Ebay_train.txt / Ebay_test.txt")
def load_sop(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    verify=True,
    resize_size=None,
):
    """Loads Stanford Online Products from its class-disjoint `Ebay_train.txt` and `Ebay_test.txt`.

    The dataset also gets `super_labels`: the product category (12 in all) of each image.

    References:
        Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016.
    """
    check_split(split, SPLITS, "sop")
    root = find_root(data_dir, ("Stanford_Online_Products",), "Ebay_train.txt", "sop", _HOW_TO_GET)
    filename = "Ebay_test.txt" if split == "test" else "Ebay_train.txt"
    paths, raw, super_raw = read_ebay_list(root, filename)
    # Each list file holds one partition's classes, so both arguments are that partition.
    classes = select_classes(split, raw, raw, val_fraction, seed, "sop")
    dataset = make_split(
        "sop",
        split,
        raw,
        classes,
        paths=paths,
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=False,
    )
    super_of_path = dict(zip(paths, super_raw.tolist()))
    if verify:
        dataset.verify()
    dataset.super_labels = np.array([super_of_path[p] for p in dataset.paths], dtype=np.int64)
    return dataset
