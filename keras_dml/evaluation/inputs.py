"""Checks and L2 normalisation of the embeddings and labels given to `evaluate`."""

import numpy as np


def _check_pair(embeddings, labels, what):
    embeddings = np.asarray(embeddings)
    labels = np.asarray(labels)
    if embeddings.ndim != 2:
        raise ValueError(
            f"`{what}embeddings` must be 2-D [N, D]. Received shape {embeddings.shape}."
        )
    if labels.ndim != 1 or labels.shape[0] != embeddings.shape[0]:
        raise ValueError(
            f"`{what}labels` must be 1-D with one label per row of `{what}embeddings`. Received "
            f"labels shape {labels.shape} for embeddings shape {embeddings.shape}."
        )
    if embeddings.shape[0] == 0:
        raise ValueError(f"`{what}embeddings` is empty.")
    embeddings = embeddings.astype(np.float32, copy=False)
    if not np.all(np.isfinite(embeddings)):
        raise ValueError(f"`{what}embeddings` contains NaN or Inf values; check the model output.")
    return embeddings, labels


def _l2_normalize(x):
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)
