"""Exact k-nearest-neighbour search by inner product, chunked over queries.

Two backends return the same neighbours on tie-free data:
- `"faiss"`: `faiss.IndexFlatIP` (exact, multi-threaded BLAS + heaps).
- `"numpy"`: chunked matmul + `argpartition`, exact.

Self-exclusion: when the queries are the references (`exclude_self=True`), query `i` is removed
from its own neighbour list *by index*, never by dropping the first neighbour, so a duplicate of the
query at similarity equal to its own still counts as a neighbour.

Ties: the neighbours of a row are ordered by decreasing similarity, then increasing reference index.
The NumPy backend also resolves ties at the K-th position by index (exact and deterministic); with
faiss, which of several references tied at the K-th position is returned is faiss's choice.
"""

import numpy as np

from keras_dml.utils import is_available, optional_import

_BACKENDS = ("auto", "faiss", "numpy")
# Elements of one [chunk, num_references] similarity block in the NumPy backend (~128 MB float32
# plus the int64 index block of argpartition).
_NUMPY_BLOCK_ELEMENTS = 2**25
_FAISS_CHUNK = 8192


def resolve_backend(backend):
    """Returns `"faiss"` or `"numpy"` for `backend` in `("auto", "faiss", "numpy")`.

    Raises:
        ValueError: for an unknown backend name.
        MissingDependencyError: for `"faiss"` when faiss is not installed.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"`backend` must be one of {_BACKENDS}. Received: backend={backend!r}")
    if backend == "auto":
        return "faiss" if is_available("faiss") else "numpy"
    if backend == "faiss":
        optional_import("faiss", feature="the faiss evaluation backend")
    return backend


def default_chunk_size(backend, num_references):
    """Queries per chunk bounding the memory of one search step."""
    if backend == "faiss":
        return _FAISS_CHUNK
    return max(1, _NUMPY_BLOCK_ELEMENTS // max(1, num_references))


def _sort_rows(indices, sims):
    """Sorts each row by decreasing similarity, then increasing index."""
    order = np.lexsort((indices, -sims), axis=-1)
    return np.take_along_axis(indices, order, 1), np.take_along_axis(sims, order, 1)


def _topk_numpy(sims, k):
    """Exact top-k of each row of `sims` [c, n]; ties at the k-th value go to lower indices."""
    n = sims.shape[1]
    if k >= n:
        part = np.broadcast_to(np.arange(n, dtype=np.int64), sims.shape).copy()
    else:
        part = np.argpartition(sims, n - k, axis=1)[:, n - k :]
        kth = np.take_along_axis(sims, part, 1).min(axis=1)
        tied_rows = np.nonzero((sims >= kth[:, None]).sum(axis=1) > k)[0]
        for row in tied_rows:
            greater = np.flatnonzero(sims[row] > kth[row])
            equal = np.flatnonzero(sims[row] == kth[row])[: k - greater.size]
            part[row] = np.concatenate([greater, equal])
    return _sort_rows(part.astype(np.int64), np.take_along_axis(sims, part, 1))


def _drop_self(indices, sims, query_ids):
    """Removes each query's own index from its k+1 neighbours (else the last one) -> k columns."""
    rows, width = indices.shape
    is_self = indices == query_ids[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), width - 1)
    keep = np.ones_like(is_self)
    keep[np.arange(rows), drop] = False
    return indices[keep].reshape(rows, width - 1), sims[keep].reshape(rows, width - 1)


def iter_neighbors(queries, references, k, exclude_self=False, backend="auto", chunk_size=None):
    """Yields the exact `k` nearest references (inner product) of every query, chunk by chunk.

    Args:
        queries: float32 array [Q, D].
        references: float32 array [N, D]. Must be `queries` itself when `exclude_self=True`.
        k: int. Neighbours per query; at most N (N - 1 with `exclude_self`).
        exclude_self: bool. Remove query i from its own neighbours (by index). Defaults to `False`.
        backend: `"auto"`, `"faiss"` or `"numpy"`. Defaults to `"auto"` (faiss when installed).
        chunk_size: int or `None`. Queries per step; `None` picks a size that keeps one step
            around 128-400 MB. Defaults to `None`.

    Yields:
        `(start, indices, similarities)`: the first query index of the chunk, int64 [c, k]
        neighbour indices and float32 [c, k] similarities, sorted by decreasing similarity.

    Examples:
    >>> x = np.eye(3, dtype="float32")
    >>> [idx.tolist() for _, idx, _ in iter_neighbors(x, x, 1, backend="numpy")]
    [[[0], [1], [2]]]
    """
    backend = resolve_backend(backend)
    num_refs = references.shape[0]
    available = num_refs - 1 if exclude_self else num_refs
    if not 1 <= k <= available:
        raise ValueError(
            f"`k` must be in [1, {available}] for {num_refs} references. Received k={k}."
        )
    chunk_size = chunk_size or default_chunk_size(backend, num_refs)
    if backend == "faiss":
        faiss = optional_import("faiss", feature="the faiss evaluation backend")
        index = faiss.IndexFlatIP(references.shape[1])
        index.add(np.ascontiguousarray(references, dtype=np.float32))
    for start in range(0, queries.shape[0], chunk_size):
        chunk = np.ascontiguousarray(queries[start : start + chunk_size], dtype=np.float32)
        query_ids = np.arange(start, start + chunk.shape[0])
        if backend == "faiss":
            sims, indices = index.search(chunk, k + 1 if exclude_self else k)
            indices = indices.astype(np.int64)
            if exclude_self:
                indices, sims = _drop_self(indices, sims, query_ids)
            indices, sims = _sort_rows(indices, sims)
        else:
            block = chunk @ references.T
            if exclude_self:
                block[np.arange(chunk.shape[0]), query_ids] = -np.inf
            indices, sims = _topk_numpy(block, k)
            del block
        yield start, indices, sims.astype(np.float32)
