"""Batch samplers: seeded NumPy index samplers read by the input pipelines (docs/data.md)."""

from keras_dml.data.samplers.cluster_m_per_class import ClusterMPerClassSampler
from keras_dml.data.samplers.epoch_callback import SamplerEpochCallback
from keras_dml.data.samplers.m_per_class import MPerClassSampler

__all__ = ["ClusterMPerClassSampler", "MPerClassSampler", "SamplerEpochCallback"]
