"""PKU VehicleID in its official layout (`train_test_split/*.txt` + `image/`)."""

import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import (
    QUERY_GALLERY_SPLITS,
    SPLITS,
    check_split,
    find_root,
    make_split,
    read_table,
    select_classes,
)

_HOW_TO_GET = (
    "Request PKU VehicleID from https://pkuml.org/resources/pku-vehicleid.html and extract it "
    "so that `train_test_split/` and `image/` sit in one folder."
)
TEST_SIZES = {"small": 800, "medium": 1600, "large": 2400}


def read_vehicle_list(root, filename):
    """Reads `image_name vehicle_id` lines; returns (paths to image/<name>.jpg, vehicle ids)."""
    rows = read_table(os.path.join(root, "train_test_split", filename))
    paths = [os.path.join(root, "image", f"{row[0]}.jpg") for row in rows]
    return paths, np.array([int(row[1]) for row in rows], dtype=np.int64)


def query_gallery_rows(vehicle_ids, seed):
    """Re-identification protocol: one seeded gallery image per vehicle, the rest queries.

    Returns:
        (query row indices, gallery row indices), sorted.
    """
    rng = np.random.default_rng(seed)
    gallery = []
    for vehicle in np.unique(vehicle_ids):
        gallery.append(rng.choice(np.flatnonzero(vehicle_ids == vehicle)))
    gallery = np.sort(np.array(gallery, dtype=np.int64))
    query = np.setdiff1d(np.arange(len(vehicle_ids)), gallery)
    return query, gallery


@register_dataset("vehicleid", "PKU VehicleID; test_size small / medium / large")
def load_vehicleid(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    test_size="small",
    verify=True,
    resize_size=None,
):
    """Loads PKU VehicleID; the vehicle id is the class (other arguments: `load_dataset`).

    Args:
        test_size: str. `"small"`, `"medium"` or `"large"`. Defaults to `"small"`.

    Examples:
    >>> test = load_vehicleid("test", data_dir="~/data", test_size="large")  # doctest: +SKIP

    References:
        Liu et al., "Deep Relative Distance Learning: Tell the Difference Between Similar
        Vehicles", CVPR 2016.
    """
    check_split(split, SPLITS + QUERY_GALLERY_SPLITS, "vehicleid")
    if test_size not in TEST_SIZES:
        raise ValueError(
            f"`test_size` must be one of {tuple(TEST_SIZES)}. Received: test_size={test_size!r}"
        )
    root = find_root(
        data_dir,
        ("VehicleID_V1.0", "VehicleID", "vehicleid"),
        os.path.join("train_test_split", "train_list.txt"),
        "vehicleid",
        _HOW_TO_GET,
    )
    if split in ("test", *QUERY_GALLERY_SPLITS):
        paths, raw = read_vehicle_list(root, f"test_list_{TEST_SIZES[test_size]}.txt")
        classes = np.unique(raw)
        if split != "test":
            query, gallery = query_gallery_rows(raw, seed)
            rows = query if split == "query" else gallery
            paths, raw = [paths[i] for i in rows], raw[rows]
    else:
        paths, raw = read_vehicle_list(root, "train_list.txt")
        classes = select_classes(split, raw, [], val_fraction, seed, "vehicleid")
    return make_split(
        "vehicleid",
        split,
        raw,
        classes,
        paths=paths,
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=verify,
    )
