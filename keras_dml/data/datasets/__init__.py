"""Metric learning datasets: `load_dataset(name, split=...)` and the loaders behind it.

Importing this package registers every built-in loader with the registry.
"""

from keras_dml.data.datasets import (
    cars196,
    cub200,
    digits,
    fashion_mnist,
    hangul,
    image_folder,
    inshop,
    kanji,
    sop,
    tfds_datasets,
    vehicleid,
)
from keras_dml.data.datasets.arrays import from_arrays
from keras_dml.data.datasets.cars196 import load_cars196
from keras_dml.data.datasets.cub200 import load_cub200
from keras_dml.data.datasets.digits import load_digits
from keras_dml.data.datasets.fashion_mnist import load_fashion_mnist
from keras_dml.data.datasets.hangul import load_hangul, render_hangul
from keras_dml.data.datasets.image_folder import load_image_folder
from keras_dml.data.datasets.inshop import load_inshop
from keras_dml.data.datasets.kanji import load_kanji, render_kanji
from keras_dml.data.datasets.registry import list_datasets, load_dataset, register_dataset
from keras_dml.data.datasets.sop import load_sop
from keras_dml.data.datasets.tfds_datasets import load_tfds
from keras_dml.data.datasets.vehicleid import load_vehicleid

del (
    cars196,
    cub200,
    digits,
    fashion_mnist,
    hangul,
    image_folder,
    inshop,
    kanji,
    sop,
    tfds_datasets,
    vehicleid,
)

__all__ = [
    "from_arrays",
    "list_datasets",
    "load_cars196",
    "load_cub200",
    "load_dataset",
    "load_digits",
    "load_fashion_mnist",
    "load_hangul",
    "load_image_folder",
    "load_inshop",
    "load_kanji",
    "load_sop",
    "load_tfds",
    "load_vehicleid",
    "register_dataset",
    "render_hangul",
    "render_kanji",
]
