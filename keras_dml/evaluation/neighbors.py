"""Exact k-nearest neighbours by inner product, chunked over queries (ties: lower index first)."""

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
    """Returns `"faiss"` or `"numpy"` for `backend` (`"auto"` is the NumPy block search).

    Raises:
        ValueError: an unknown backend name.
        MissingDependencyError: `"faiss"` without faiss installed.
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

    `exclude_self=True` (the queries are the references) leaves each query out by index.

    Yields:
        `(start, indices, similarities)`: the chunk's first query, int64 and float32 `[c, k]`.

    Examples:
    >>> import numpy as np
    >>> x = np.eye(3, dtype="float32")
    >>> [idx.tolist() for _, idx, _ in iter_neighbors(x, x, 1, backend="numpy")]
    [[[0], [1], [2]]]
    """
    kind = "flat" if resolve_backend(backend) == "faiss" else "exact"
    index = EmbeddingIndex.from_embeddings(references, backend=kind)
    yield from index.iter_search(queries, k, exclude_self=exclude_self, chunk_size=chunk_size)
