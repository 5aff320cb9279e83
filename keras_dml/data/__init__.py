"""Datasets in their official protocols, the input pipelines and batch samplers.

The `tf.data` names need TensorFlow and live in their modules: `keras_dml.data.pipeline`
(`make_tf_dataset`) and `keras_dml.data.preprocessing`.
"""

from keras_dml.data.datasets import (
    DATASETS,
    from_arrays,
    list_datasets,
    load_dataset,
    register_dataset,
    render_hangul,
    render_kanji,
)
from keras_dml.data.image_dataset import ImageDataset
from keras_dml.data.pipeline_options import PipelineOptions
from keras_dml.data.py_pipeline import make_py_dataset
from keras_dml.data.samplers import ClusterMPerClassSampler, MPerClassSampler, SamplerEpochCallback
from keras_dml.data.transform_options import AUGMENTATIONS, default_resize_size

__all__ = [
    "AUGMENTATIONS",
    "DATASETS",
    "ClusterMPerClassSampler",
    "ImageDataset",
    "MPerClassSampler",
    "PipelineOptions",
    "SamplerEpochCallback",
    "default_resize_size",
    "from_arrays",
    "list_datasets",
    "load_dataset",
    "make_py_dataset",
    "register_dataset",
    "render_hangul",
    "render_kanji",
]
