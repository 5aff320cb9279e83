"""Diagnostics of a trained DCML model: how its compositors weight the learners (Fig. 4)."""

import numpy as np
from keras import ops

from keras_dml.data.batch_streams import is_batch_stream


def average_compositor_weights(model, images, batch_size=128):
    """`mean_x |c_m(y(x))|` `[M, K]` of a `DCML` model: see `DCML.compositor_weights`."""
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
