"""`rerank_search`: the re-ranked top-k of many queries, a bounded chunk at a time."""

import numpy as np

# Queries re-ranked per step: k-reciprocal holds `chunk x candidates` sparse encodings.
CHUNKS = {"k_reciprocal": 256}
DEFAULT_CHUNK = 4096


def rerank_search(reranker, prepared, vectors, k, self_rows=None):
    """Re-ranked top-k `(indices, scores)` of `vectors` `[Q, D]`, chunk by chunk.

    Args:
        reranker: the `Reranker` (its name picks the chunk size).
        prepared: `reranker.prepare(searcher, gallery)`.
        vectors: float32 `[Q, D]` query vectors.
        k: int. Neighbours per query (at most the gallery size, minus 1 with `self_rows`).
        self_rows: int64 `[Q]` gallery rows of the queries (leave-one-out) or `None`.

    Returns:
        int64 `[Q, k]` gallery rows and float32 `[Q, k]` scores, best first.
    """
    chunk = CHUNKS.get(reranker.name, DEFAULT_CHUNK)
    parts = []
    for start in range(0, vectors.shape[0], chunk):
        rows = None if self_rows is None else np.asarray(self_rows[start : start + chunk])
        part = np.asarray(vectors[start : start + chunk], dtype=np.float32)
        parts.append(prepared.search(part, k, rows))
    if not parts:
        return np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
