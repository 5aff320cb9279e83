"""In-shop Clothes Retrieval (DeepFashion): `list_eval_partition.txt` + `img/`."""

import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import (
    QUERY_GALLERY_SPLITS,
    check_split,
    find_root,
    make_split,
    read_table,
    select_classes,
)

_HOW_TO_GET = (
    "Download the In-shop Clothes Retrieval Benchmark of DeepFashion "
    "(https://mmlab.ie.cuhk.edu.hk/projects/DeepFashion/InShopRetrieval.html): "
    "Eval/list_eval_partition.txt and Img/img.zip, extracted so that `img/` sits next to the list."
)
_SPLITS = ("train", "val", "trainval", *QUERY_GALLERY_SPLITS)


def read_partition(path):
    """Reads `list_eval_partition.txt`: (relative paths, item ids, "train"/"query"/"gallery")."""
    rows = read_table(path, skip_header=2)
    return (
        [row[0] for row in rows],
        np.array([row[1] for row in rows]),
        np.array([row[2] for row in rows]),
    )


@register_dataset("inshop", "In-shop Clothes: 3,997 train items; query vs gallery on 3,985")
def load_inshop(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    verify=True,
    resize_size=None,
):
    """Loads In-shop Clothes Retrieval; each item id of `list_eval_partition.txt` is a class.

    `"query"` and `"gallery"` share one label mapping; there is no `"test"` split.

    References:
        Liu et al., "DeepFashion: Powering Robust Clothes Recognition and Retrieval with Rich
        Annotations", CVPR 2016.
    """
    if split == "test":
        raise ValueError(
            "In-shop is evaluated by retrieving `query` images among `gallery` images; load "
            "split='query' and split='gallery'. Received: split='test'"
        )
    check_split(split, _SPLITS, "inshop")
    root = find_root(
        data_dir, ("InShop", "In-shop", "inshop"), "list_eval_partition.txt", "inshop", _HOW_TO_GET
    )
    rel_paths, items, status = read_partition(os.path.join(root, "list_eval_partition.txt"))
    if split in QUERY_GALLERY_SPLITS:
        rows = np.flatnonzero(status == split)
        classes = np.unique(items[status != "train"])
    else:
        rows = np.flatnonzero(status == "train")
        classes = select_classes(split, items[rows], [], val_fraction, seed, "inshop")
    return make_split(
        "inshop",
        split,
        items[rows],
        classes,
        paths=[os.path.join(root, rel_paths[i]) for i in rows],
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=verify,
    )
