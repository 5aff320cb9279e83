"""Datasets in their official protocols, the tf.data input pipeline and batch samplers."""

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
from keras_dml.data.pipeline import make_tf_dataset
from keras_dml.data.preprocessing import (
    default_resize_size,
    preprocess_for_eval,
    preprocess_for_train,
)
from keras_dml.data.samplers import (
    ClusterMPerClassSampler,
    MPerClassSampler,
    SamplerEpochCallback,
)

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
    "make_tf_dataset",
    "preprocess_for_eval",
    "preprocess_for_train",
    "register_dataset",
    "render_hangul",
]
