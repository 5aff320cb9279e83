"""Datasets in their official protocols, the input pipelines and batch samplers.

Importing this package does not import TensorFlow: the `tf.data` pipeline (`make_tf_dataset`,
`preprocess_for_eval`, `preprocess_for_train`) loads on first use.
"""

import importlib

from keras_dml.data.datasets import (
    from_arrays,
    list_datasets,
    load_cars196,
    load_cub200,
    load_dataset,
    load_digits,
    load_fashion_mnist,
    load_hangul,
    load_image_folder,
    load_inshop,
    load_sop,
    load_tfds,
    load_vehicleid,
    register_dataset,
    render_hangul,
)
from keras_dml.data.image_dataset import ImageDataset
from keras_dml.data.py_pipeline import make_py_dataset
from keras_dml.data.samplers import (
    ClusterMPerClassSampler,
    MPerClassSampler,
    SamplerEpochCallback,
)
from keras_dml.data.transform_options import default_resize_size

# The TensorFlow-backed names, imported when first asked for.
_TF_NAMES = {
    "make_tf_dataset": "keras_dml.data.pipeline",
    "preprocess_for_eval": "keras_dml.data.preprocessing",
    "preprocess_for_train": "keras_dml.data.preprocessing",
}


def __getattr__(name):
    if name in _TF_NAMES:
        return getattr(importlib.import_module(_TF_NAMES[name]), name)
    raise AttributeError(f"module 'keras_dml.data' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_TF_NAMES])


__all__ = [
    "ClusterMPerClassSampler",
    "ImageDataset",
    "MPerClassSampler",
    "SamplerEpochCallback",
    "default_resize_size",
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
    "load_sop",
    "load_tfds",
    "load_vehicleid",
    "make_py_dataset",
    "make_tf_dataset",
    "preprocess_for_eval",
    "preprocess_for_train",
    "register_dataset",
    "render_hangul",
]
