"""Cluster-conditioned training batches of D&C and hierarchical D&C."""

import numpy as np

from keras_dml.data import ClusterMPerClassSampler, SamplerEpochCallback
from keras_dml.methods.defaults import check_resolved, sampled_batches

# Batch of the inference passes over the training set before a re-clustering: forward only, so a
# larger batch than training's keeps the division overhead low (D&C target: <= 15% of an epoch).
EMBEDDING_BATCH = 256


def cluster_batches(config, train_data, epoch_length=None):
    """`(sampler, dataset)`: a one-cluster `ClusterMPerClassSampler` and the batches it draws."""
    check_resolved(config)
    if epoch_length is None:
        epoch_length = max(1, len(train_data.labels) // config["batch_size"])
    sampler = ClusterMPerClassSampler(
        train_data.labels,
        np.zeros((len(train_data.labels),), np.int64),
        m=config["m_per_class"],
        batch_size=config["batch_size"],
        seed=config["seed"],
        epoch_length=int(epoch_length),
    )
    return sampler, sampled_batches(config, train_data, sampler, with_clusters=True)


def prepare_division(config, splits, options, callback_class, **callback_options):
    """Cluster-conditioned batches with `[callback_class(...), SamplerEpochCallback]`."""
    train_data = splits["train"]
    sampler, dataset = cluster_batches(config, train_data, options.epoch_length)
    callback = callback_class(
        train_data,
        train_data.labels,
        sampler,
        **division_options(config, options),
        **callback_options,
    )
    return dataset, [callback, SamplerEpochCallback(sampler)]


def division_options(config, options):
    """The keyword arguments both division callbacks take, from the configuration and options."""
    return {
        "cluster_on": options.cluster_on,
        "niter": options.kmeans_niter,
        "nredo": options.kmeans_nredo,
        "similarity": options.similarity,
        "seed": config["seed"],
        "batch_size": max(EMBEDDING_BATCH, config["batch_size"]),
        "image_size": config["image_size"],
    }
