"""Cluster-conditioned training batches of D&C and hierarchical D&C."""

import numpy as np

from keras_dml.data import ClusterMPerClassSampler, SamplerEpochCallback
from keras_dml.methods.batch_composition import with_batch_composition
from keras_dml.methods.defaults import sampled_batches

# Batch of the inference passes over the training set before a re-clustering: forward only, so a
# larger batch than training's keeps the division overhead low (D&C target: <= 15% of an epoch).
EMBEDDING_BATCH = 256


def cluster_batches(config, train_data, epoch_length=None):
    """Batches drawn within one cluster at a time (Divide & Conquer and its hierarchical form).

    Args:
        config: resolved run configuration (`batch_size`, `m_per_class`, `image_size`, `seed`).
        train_data: training `ImageDataset`.
        epoch_length: int or `None`. Batches per epoch, fixed so that Keras knows every epoch's
            length although re-clustering changes the clusters. Defaults to `None`: training
            samples // batch size.

    Returns:
        `(sampler, dataset)`: a `ClusterMPerClassSampler` starting with one cluster (the method's
        callback replaces its assignment) and the `tf.data.Dataset` of
        `(images, {"labels", "clusters"})` it drives.
    """
    config = with_batch_composition(config, train_data.labels)
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
    """Cluster-conditioned batches and the method's division callback, wired together.

    Args:
        config: resolved run configuration.
        splits: dict of loaded splits (uses `train`).
        options: the method's parsed options (`epoch_length` and those of `division_options`).
        callback_class: the method's callback class, called as
            `callback_class(train_data, labels, sampler, **options)`.
        **callback_options: the method's own callback arguments.

    Returns:
        `(train_dataset, [callback, SamplerEpochCallback])`: the second sets the sampler's
        epoch, so a resumed run draws the batches the uninterrupted run drew.
    """
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
    """The keyword arguments every division callback takes, from a run configuration.

    Args:
        config: resolved run configuration (`seed`, `batch_size`).
        options: the method's options (`cluster_on`, `kmeans_niter`, `kmeans_nredo`,
            `similarity`).

    Returns:
        dict of `cluster_on`, `niter`, `nredo`, `similarity`, `seed` and `batch_size` (the
        embedding pass's batch: at least `EMBEDDING_BATCH`).
    """
    return {
        "cluster_on": options.cluster_on,
        "niter": options.kmeans_niter,
        "nredo": options.kmeans_nredo,
        "similarity": options.similarity,
        "seed": config["seed"],
        "batch_size": max(EMBEDDING_BATCH, config["batch_size"]),
    }
