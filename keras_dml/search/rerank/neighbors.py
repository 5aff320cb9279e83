"""Neighbour lists the re-ranking methods share: searches that leave each query's own row out."""

import numpy as np

from keras_dml.search.exact_topk import drop_self
from keras_dml.search.normalize import l2_normalize

# Queries per step of a gallery-wide pass (bounded memory: one search chunk at a time).
CHUNK = 4096


def search_without_self(searcher, vectors, k, self_rows=None):
    """Top-k `(indices, scores)` of `vectors` in `searcher`, each query's own row left out.

    Args:
        searcher: an `EmbeddingIndex` or `ShardedIndex` (anything with `search_embeddings`).
        vectors: float32 `[c, D]` query vectors (any vectors: expanded queries too).
        k: int. Neighbours per query.
        self_rows: int64 `[c]` gallery rows of the queries (leave-one-out), or `None`.

    Returns:
        int64 `[c, k]` gallery rows and float32 `[c, k]` scores, best first. With `self_rows`,
        row `self_rows[i]` is removed from list i by index (a duplicate of it still counts).
    """
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
    """`normalise(x + sum_j w_j g_j)` with `w_j = max(s_j, 0) ** alpha` over the given neighbours.

    The shared step of query expansion and database-side augmentation: `alpha=0` gives every
    neighbour weight 1 (the plain average of Chum et al. 2007), `alpha=3` the alpha-weighted
    mean of Radenovic et al. 2018 (Sec. 5); the vector itself always has weight 1.

    Args:
        vectors: float32 `[c, D]`.
        gallery: float32 `[N, D]`.
        neighbors: int64 `[c, n]` gallery rows (never the vector's own row).
        scores: float32 `[c, n]` their similarities to `vectors`.
        alpha: float >= 0.

    Returns:
        float32 `[c, D]`, L2-normalised.
    """
    weights = np.maximum(scores, 0.0) ** alpha if alpha else np.ones_like(scores)
    weights = np.where(neighbors >= 0, weights, 0.0).astype(np.float32)
    found = np.asarray(gallery[np.maximum(neighbors, 0).reshape(-1)], dtype=np.float32)
    found = found.reshape(*neighbors.shape, -1)
    expanded = vectors + np.einsum("cn,cnd->cd", weights, found)
    return l2_normalize(expanded.astype(np.float32))
