"""Exact k-nearest-neighbour search by inner product, chunked over queries.

The search itself lives in `keras_dml.search` (`EmbeddingIndex`, whose exact NumPy algorithm is
`keras_dml.search.exact_topk`); this module keeps the evaluation's entry points:
- `"numpy"`: the exact NumPy index (one matmul block per chunk of queries, tiled over the
  references when they are many, top-k without a full sort);
- `"faiss"`: the `"flat"` index, `faiss.IndexFlatIP` (fused BLAS + heaps).

Self-exclusion: when the queries are the references (`exclude_self=True`), query `i` is removed
from its own neighbour list *by index*, never by dropping the first neighbour, so a duplicate of the
query at similarity equal to its own still counts as a neighbour.

Ties: neighbours are ordered by decreasing similarity, then increasing reference index, at every
position with both backends (faiss results are re-sorted, and which of several references tied at
the k-th position faiss returns is faiss's choice). BLAS may round the same dot product
differently in different block shapes, so "tied" means equal as computed.
"""

from keras_dml.search.exact_topk import (
    default_chunk_size as _numpy_chunk_size,
)
from keras_dml.search.exact_topk import (
    similarity_block,
    sort_rows,
    topk_from_block,
)
from keras_dml.search.index import EmbeddingIndex
from keras_dml.utils import optional_import

__all__ = [
    "default_chunk_size",
    "iter_blocks",
    "iter_neighbors",
    "resolve_backend",
    "similarity_block",
    "sort_rows",
    "topk_from_block",
]

_BACKENDS = ("auto", "faiss", "numpy")
_FAISS_CHUNK = 8192


def resolve_backend(backend):
    """Returns `"faiss"` or `"numpy"` for `backend` in `("auto", "faiss", "numpy")`.

    `"auto"` picks the NumPy block path for the exact search: on CPU one float32 matmul block per
    chunk measured faster than `IndexFlatIP` (see `benchmarks/evaluation.py`), and it gives the
    first-hit rank, hence Recall@K at any K, without a K-sized heap. (NMI's k-means is NumPy
    whatever the backend, `keras_dml.evaluation.kmeans`.)

    Args:
        backend: str. `"auto"`, `"faiss"` or `"numpy"`.

    Raises:
        ValueError: for an unknown backend name.
        MissingDependencyError: for `"faiss"` when faiss is not installed.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"`backend` must be one of {_BACKENDS}. Received: backend={backend!r}")
    if backend == "auto":
        return "numpy"
    if backend == "faiss":
        optional_import("faiss", feature="the faiss evaluation backend")
    return backend


def default_chunk_size(backend, num_references):
    """Queries per chunk bounding the memory of one search step."""
    if backend == "faiss":
        return _FAISS_CHUNK
    return _numpy_chunk_size(num_references)


def iter_blocks(queries, references, exclude_self=False, chunk_size=None):
    """Yields `(start, block)`: similarity blocks [c, N] with each query's own entry at -inf."""
    chunk_size = chunk_size or default_chunk_size("numpy", references.shape[0])
    for start in range(0, queries.shape[0], chunk_size):
        yield start, similarity_block(queries, references, start, chunk_size, exclude_self)


def iter_neighbors(queries, references, k, exclude_self=False, backend="auto", chunk_size=None):
    """Yields the exact `k` nearest references (inner product) of every query, chunk by chunk.

    Args:
        queries: float32 array [Q, D].
        references: float32 array [N, D]. Must be `queries` itself when `exclude_self=True`.
        k: int. Neighbours per query; at most N (N - 1 with `exclude_self`).
        exclude_self: bool. Remove query i from its own neighbours (by index). Defaults to `False`.
        backend: `"auto"`, `"faiss"` or `"numpy"`. Defaults to `"auto"` (see `resolve_backend`).
        chunk_size: int or `None`. Queries per step; `None` keeps one NumPy block near 128 MB.
            Defaults to `None`.

    Yields:
        `(start, indices, similarities)`: the first query index of the chunk, int64 [c, k]
        neighbour indices and float32 [c, k] similarities, sorted by decreasing similarity.

    Examples:
    >>> import numpy as np
    >>> x = np.eye(3, dtype="float32")
    >>> [idx.tolist() for _, idx, _ in iter_neighbors(x, x, 1, backend="numpy")]
    [[[0], [1], [2]]]
    """
    kind = "flat" if resolve_backend(backend) == "faiss" else "exact"
    index = EmbeddingIndex.from_embeddings(references, backend=kind)
    yield from index.iter_search(queries, k, exclude_self=exclude_self, chunk_size=chunk_size)
