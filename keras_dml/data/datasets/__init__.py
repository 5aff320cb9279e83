"""Metric learning datasets: `load_dataset(name, split=...)` and the loaders behind it.

Importing a loader's module registers it in `DATASETS`; `list_datasets()` names them all.
"""

from keras_dml.data.datasets import (  # noqa: F401 (each import registers its loaders)
    cars196,
    cub200,
    digits,
    fashion_mnist,
    image_folder,
    inshop,
    sop,
    tfds_datasets,
    vehicleid,
)
from keras_dml.data.datasets.arrays import from_arrays
from keras_dml.data.datasets.hangul import render_hangul
from keras_dml.data.datasets.kanji import render_kanji
from keras_dml.data.datasets.registry import DATASETS, list_datasets, load_dataset, register_dataset

__all__ = [
    "DATASETS",
    "from_arrays",
    "list_datasets",
    "load_dataset",
    "register_dataset",
    "render_hangul",
    "render_kanji",
]
