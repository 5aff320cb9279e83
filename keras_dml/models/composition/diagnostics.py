"""Diagnostics of a trained DCML model: how its compositors weight the learners (Fig. 4)."""

import numpy as np
from keras import ops

from keras_dml.data.batch_streams import is_batch_stream


def average_compositor_weights(model, images, batch_size=128):
    """Average absolute weight of each compositor per learner, `mean_x |c_m(y(x))|`.

    Args:
        model: `DCML`. The model whose compositors are analysed.
        images: raw-pixel images `[N, H, W, 3]` (array or tensor) or a batched dataset
            (`tf.data.Dataset`, `keras.utils.PyDataset`) yielding images or `(images, labels)`
            batches.
        batch_size: int. Batch size for arrays and for the compositor pass. Defaults to `128`.

    Returns:
        float32 numpy array `[M, K]`; every row sums to 1.

    Examples:
    >>> weights = average_compositor_weights(model, train_images)

    References:
        Zheng et al., "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.3, Fig. 4.
    """
    if is_batch_stream(images):
        embeddings = model.predict(images, verbose=0)
    else:
        embeddings = model.predict(images, batch_size=batch_size, verbose=0)
    if len(embeddings) == 0:
        raise ValueError("`images` is empty: cannot average compositor weights.")
    total = np.zeros((model.num_compositors, model.num_learners), dtype="float64")
    for start in range(0, len(embeddings), batch_size):
        weights = model.compositor(embeddings[start : start + batch_size])
        total += np.abs(ops.convert_to_numpy(weights)).sum(axis=0)
    return (total / len(embeddings)).astype("float32")
