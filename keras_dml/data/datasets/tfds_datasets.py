"""CUB-200-2011, Cars196 and SOP through TensorFlow Datasets, exported once to image files."""

import os

import numpy as np

from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import (
    SPLITS,
    check_split,
    make_split,
    read_table,
    select_classes,
)
from keras_dml.utils import optional_import

# tfds name -> (label feature, tfds splits pooled, (first test class) or None for tfds splits).
TFDS_SPECS = {
    "caltech_birds2011": ("label", ("train", "test"), 100),
    "cars196": ("label", ("train", "test"), 98),
    "stanford_online_products": ("class_id", ("train", "test"), None),
}
MANIFEST = "manifest.tsv"


def _tfds():
    return optional_import("tensorflow_datasets", feature="the `tfds:` datasets")


def _extension(data):
    if data[:3] == b"\xff\xd8\xff":
        return ".jpg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return ".png"
    return ".img"


def _class_names(info, label_key):
    try:
        return [str(n) for n in info.features[label_key].names]
    except (AttributeError, KeyError, TypeError):
        return None


def export_tfds(tfds_name, export_dir, data_dir=None, download=True):
    """Writes a TFDS dataset's encoded images and `manifest.tsv` to `export_dir` once.

    Args:
        tfds_name: str. A key of `TFDS_SPECS`.
        export_dir: str. Destination (`images/` and the manifest, written last).
        download: bool. Let TFDS download and prepare the data. Defaults to `True`.

    Returns:
        str: path of the manifest.
    """
    manifest = os.path.join(export_dir, MANIFEST)
    if os.path.isfile(manifest):
        return manifest
    tfds = _tfds()
    label_key, tfds_splits, _ = TFDS_SPECS[tfds_name]
    os.makedirs(os.path.join(export_dir, "images"), exist_ok=True)
    lines, names = [], None
    for tfds_split in tfds_splits:
        try:
            ds, info = tfds.load(
                tfds_name,
                split=tfds_split,
                data_dir=data_dir,
                download=download,
                with_info=True,
                shuffle_files=False,
                decoders={"image": tfds.decode.SkipDecoding()},
            )
        except Exception as error:
            action = (
                "pass download=True on a machine with network access"
                if not download
                else "check the network connection and disk space"
            )
            raise FileNotFoundError(
                f"TensorFlow Datasets could not load `{tfds_name}` (split {tfds_split}, data_dir="
                f"{data_dir}): {type(error).__name__}: {error}. To fix: {action}, or point "
                "`data_dir=` at a folder where it is already prepared."
            ) from error
        names = _class_names(info, label_key) or names
        for index, example in enumerate(tfds.as_numpy(ds)):
            data = bytes(example["image"])
            relative = os.path.join("images", f"{tfds_split}_{index:06d}{_extension(data)}")
            with open(os.path.join(export_dir, relative), "wb") as handle:
                handle.write(data)
            lines.append(f"{relative}\t{int(example[label_key])}\t{tfds_split}\n")
    if names:
        with open(os.path.join(export_dir, "class_names.txt"), "w", encoding="utf-8") as handle:
            handle.writelines(f"{n}\n" for n in names)
    with open(manifest + ".tmp", "w", encoding="utf-8") as handle:
        handle.writelines(lines)
    os.replace(manifest + ".tmp", manifest)
    return manifest


def load_tfds(
    tfds_name,
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    cache_dir=None,
    download=True,
    verify=True,
    resize_size=None,
):
    """Loads a TFDS dataset with the DML class split (other arguments: `load_dataset`).

    Args:
        tfds_name: str. One of `TFDS_SPECS`.
        cache_dir: str. Where images are exported. Defaults to `None`
            (`~/.keras/datasets/keras_dml_tfds`).
        download: bool. Allow TFDS to download. Defaults to `True`.

    Examples:
    >>> train = load_tfds("caltech_birds2011", "train")  # doctest: +SKIP

    References:
        Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016.
    """
    check_split(split, SPLITS, f"tfds:{tfds_name}")
    cache_dir = os.path.expanduser(
        cache_dir or os.path.join("~", ".keras", "datasets", "keras_dml_tfds")
    )
    export_dir = os.path.join(cache_dir, tfds_name)
    manifest = export_tfds(tfds_name, export_dir, data_dir=data_dir, download=download)
    rows = read_table(manifest)
    paths = np.array([os.path.join(export_dir, row[0]) for row in rows])
    raw = np.array([int(row[1]) for row in rows], dtype=np.int64)
    origin = np.array([row[2] for row in rows])
    first_test = TFDS_SPECS[tfds_name][2]
    if first_test is None:
        in_test = origin == "test"
        train_classes, test_classes = np.unique(raw[~in_test]), np.unique(raw[in_test])
        rows_kept = in_test if split == "test" else ~in_test
        paths, raw = paths[rows_kept], raw[rows_kept]
    else:
        present = np.unique(raw)
        train_classes, test_classes = present[present < first_test], present[present >= first_test]
    classes = select_classes(split, train_classes, test_classes, val_fraction, seed, tfds_name)
    names_file = os.path.join(export_dir, "class_names.txt")
    names = None
    if os.path.isfile(names_file):
        with open(names_file, encoding="utf-8") as handle:
            names = handle.read().splitlines()
    return make_split(
        f"tfds:{tfds_name}",
        split,
        raw,
        classes,
        class_names=(lambda c: names[c] if c < len(names) else str(c)) if names else None,
        paths=paths.tolist(),
        image_size=image_size or 224,
        resize_size=resize_size,
        verify=verify,
    )


def _register(tfds_name):
    def loader(split="train", data_dir=None, image_size=None, val_fraction=0.15, seed=0, **kw):
        return load_tfds(tfds_name, split, data_dir, image_size, val_fraction, seed, **kw)

    loader.__doc__ = f"Loads `{tfds_name}` through TensorFlow Datasets; see `load_tfds`."
    register_dataset(f"tfds:{tfds_name}", f"TensorFlow Datasets `{tfds_name}`, DML class split")(
        loader
    )


for _name in TFDS_SPECS:
    _register(_name)
