"""The embedding pass over the training set that every re-clustering starts with.

The compiled forward function and the input cache are D&C's (`divide_and_conquer.embedding_pass`):
both methods embed the unshuffled training split before each division.
"""

import numpy as np

from keras_dml.models.divide_and_conquer.embedding_pass import cached_inputs, compiled_forward

__all__ = ["cached_inputs", "compiled_forward", "embed_training_set"]


def embed_training_set(forward, data, labels, batch_size=256):
    """Embeds `data` in index order and checks it aligns with `labels`.

    Args:
        forward: callable from `compiled_forward`.
        data: an `ImageDataset` (or the dataset `cached_inputs` made of it), an unshuffled
            batched `tf.data.Dataset` or an array of images.
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
