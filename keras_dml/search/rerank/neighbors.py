"""Neighbour lists the re-ranking methods share: searches that leave each query's own row out."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.search.exact_topk import drop_self

# Queries per step of a gallery-wide pass (bounded memory: one search chunk at a time).
CHUNK = 4096


def search_without_self(searcher, vectors, k, self_rows=None):
    """Top-k `(indices, scores)` `[c, k]` of `vectors`, row `self_rows[i]` left out of list i."""
    if self_rows is None:
        return searcher.search_embeddings(vectors, k)
    indices, scores = searcher.search_embeddings(vectors, k + 1)
    return drop_self(indices, scores, np.asarray(self_rows))


def gallery_neighbors(searcher, gallery, k):
    """The k nearest other gallery rows of every gallery row, chunked: `[N, k]` rows and scores."""
    parts = []
    for start in range(0, gallery.shape[0], CHUNK):
        rows = np.asarray(gallery[start : start + CHUNK], dtype=np.float32)
        own = np.arange(start, start + rows.shape[0])
        parts.append(search_without_self(searcher, rows, k, own))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def weighted_expansion(vectors, gallery, neighbors, scores, alpha):
    """`normalise(x + sum_j max(s_j, 0) ** alpha g_j)` over the given gallery neighbours.

    `alpha=0` is the plain average of Chum et al. (2007), `alpha=3` the alpha-weighted mean of
    Radenovic et al. (2018, Sec. 5); the vector itself has weight 1.
    """
    weights = np.maximum(scores, 0.0) ** alpha if alpha else np.ones_like(scores)
    weights = np.where(neighbors >= 0, weights, 0.0).astype(np.float32)
    found = np.asarray(gallery[np.maximum(neighbors, 0).reshape(-1)], dtype=np.float32)
    found = found.reshape(*neighbors.shape, -1)
    expanded = vectors + np.einsum("cn,cnd->cd", weights, found)
    return l2_normalize(expanded.astype(np.float32))
