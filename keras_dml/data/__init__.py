"""Datasets in their official protocols, the input pipelines and batch samplers.

Names load on first use, so importing this package imports neither TensorFlow (the `tf.data`
pipeline: `make_tf_dataset`, `preprocess_for_eval`, `preprocess_for_train`) nor Keras, and the
PyDataset pipeline's worker processes, which import `keras_dml.data.batch_loading`, start with
NumPy and PIL alone.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # names for documentation tools and type checkers; run time: __getattr__
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
        load_kanji,
        load_sop,
        load_tfds,
        load_vehicleid,
        register_dataset,
        render_hangul,
        render_kanji,
    )
    from keras_dml.data.image_dataset import (
        ImageDataset,
    )
    from keras_dml.data.pipeline import (
        make_tf_dataset,
    )
    from keras_dml.data.preprocessing import (
        preprocess_for_eval,
        preprocess_for_train,
    )
    from keras_dml.data.py_pipeline import (
        make_py_dataset,
    )
    from keras_dml.data.samplers import (
        ClusterMPerClassSampler,
        MPerClassSampler,
        SamplerEpochCallback,
    )
    from keras_dml.data.transform_options import (
        default_resize_size,
    )

# Public name -> the module defining it.
_MODULES = {
    "ClusterMPerClassSampler": "keras_dml.data.samplers",
    "ImageDataset": "keras_dml.data.image_dataset",
    "MPerClassSampler": "keras_dml.data.samplers",
    "SamplerEpochCallback": "keras_dml.data.samplers",
    "default_resize_size": "keras_dml.data.transform_options",
    "from_arrays": "keras_dml.data.datasets",
    "list_datasets": "keras_dml.data.datasets",
    "load_cars196": "keras_dml.data.datasets",
    "load_cub200": "keras_dml.data.datasets",
    "load_dataset": "keras_dml.data.datasets",
    "load_digits": "keras_dml.data.datasets",
    "load_fashion_mnist": "keras_dml.data.datasets",
    "load_hangul": "keras_dml.data.datasets",
    "load_image_folder": "keras_dml.data.datasets",
    "load_inshop": "keras_dml.data.datasets",
    "load_kanji": "keras_dml.data.datasets",
    "load_sop": "keras_dml.data.datasets",
    "load_tfds": "keras_dml.data.datasets",
    "load_vehicleid": "keras_dml.data.datasets",
    "make_py_dataset": "keras_dml.data.py_pipeline",
    "make_tf_dataset": "keras_dml.data.pipeline",
    "preprocess_for_eval": "keras_dml.data.preprocessing",
    "preprocess_for_train": "keras_dml.data.preprocessing",
    "register_dataset": "keras_dml.data.datasets",
    "render_hangul": "keras_dml.data.datasets",
    "render_kanji": "keras_dml.data.datasets",
}

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
    "load_kanji",
    "load_sop",
    "load_tfds",
    "load_vehicleid",
    "make_py_dataset",
    "make_tf_dataset",
    "preprocess_for_eval",
    "preprocess_for_train",
    "register_dataset",
    "render_hangul",
    "render_kanji",
]


# Modules of the package, reachable as attributes (`keras_dml.data.samplers`) as when eager.
_SUBMODULES = (
    "batch_loading",
    "batch_streams",
    "dataset_pipelines",
    "datasets",
    "file_verification",
    "image_batches",
    "image_dataset",
    "index_epochs",
    "numpy_preprocessing",
    "pipeline",
    "preprocessing",
    "py_pipeline",
    "run_splits",
    "sampler_epochs",
    "samplers",
    "transform_options",
)


def __getattr__(name):
    if name in _MODULES:
        return getattr(importlib.import_module(_MODULES[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"keras_dml.data.{name}")
    raise AttributeError(f"module 'keras_dml.data' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_MODULES, *_SUBMODULES])
