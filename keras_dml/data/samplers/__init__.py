"""Batch samplers: seeded, pure-NumPy index samplers consumed by the input pipeline.

Protocol: a sampler has `batch_size` (int), `num_batches` (batches per epoch) and
`epoch_batches()`, which returns the next epoch as a list of 1-D int64 index arrays (or of
`(indices, cluster_id)` tuples when `yields_clusters` is `True`). The samplers here also have
`set_epoch(epoch)` and `epoch`: an epoch's batches are a function of `(seed, epoch)`, and
`SamplerEpochCallback` sets the epoch Keras runs, so a resumed run draws what it drew before.
"""

from keras_dml.data.samplers.cluster_m_per_class import ClusterMPerClassSampler
from keras_dml.data.samplers.epoch_callback import SamplerEpochCallback
from keras_dml.data.samplers.m_per_class import MPerClassSampler

__all__ = ["ClusterMPerClassSampler", "MPerClassSampler", "SamplerEpochCallback"]
