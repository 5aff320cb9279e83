"""Cluster-conditioned training batches of D&C and hierarchical D&C."""

import numpy as np

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
    from keras_dml.data import ClusterMPerClassSampler

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
    dataset = train_data.as_tf_dataset(
        training=True,
        batch_size=config["batch_size"],
        sampler=sampler,
        image_size=config["image_size"],
        seed=config["seed"],
        with_clusters=True,
    )
    return sampler, dataset
