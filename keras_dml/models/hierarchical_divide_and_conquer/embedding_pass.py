"""The embedding pass over the training set that every re-clustering starts with."""

import numpy as np
import tensorflow as tf


def compiled_forward(model, features=False):
    """A compiled inference function: the model output (Eq. 8) or L2-normalised pooled features.

    Args:
        model: a `HierarchicalDivideAndConquer` (any `EmbeddingModel`).
        features: bool. Pooled backbone features instead of the embedding. Defaults to `False`.

    Returns:
        callable `images -> float32 tensor [N, D]`, traced once and reused by every division.
    """

    @tf.function(reduce_retracing=True)
    def forward(images):
        if features:
            pooled = tf.cast(model.features(images, training=False), "float32")
            return tf.math.l2_normalize(pooled, axis=-1)
        return model(images, training=False)

    return lambda images: forward(tf.convert_to_tensor(images, tf.float32))


def embed_training_set(forward, data, labels, batch_size=256):
    """Embeds `data` in index order and checks it aligns with `labels`.

    Args:
        forward: callable from `compiled_forward`.
        data: an `ImageDataset`, an unshuffled batched `tf.data.Dataset` or an array of images.
        labels: 1-D array aligned with `data`.
        batch_size: int. Batch size for `ImageDataset`s and arrays. Defaults to `256`.

    Returns:
        float32 array `[N, D]`.

    Raises:
        ValueError: when the number of vectors differs from the number of labels.
    """
    from keras_dml.evaluation import embed

    vectors, _ = embed(forward, data, batch_size=batch_size, verbose=False)
    if vectors.shape[0] != len(labels):
        raise ValueError(
            f"`train_data` gave {vectors.shape[0]} vectors for {len(labels)} labels; "
            "pass the unshuffled training split in the sampler's index order."
        )
    return np.asarray(vectors, np.float32)
