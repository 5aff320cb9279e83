"""Exact k-nearest-neighbour search by inner product, chunked over queries.

Two exact backends:
- `"numpy"`: per chunk of queries, one matmul block [c, N], then `np.partition` (values only) for
  the k-th largest similarity and the neighbours at or above it.
- `"faiss"`: `faiss.IndexFlatIP` (fused BLAS + heaps).

Self-exclusion: when the queries are the references (`exclude_self=True`), query `i` is removed
from its own neighbour list *by index*, never by dropping the first neighbour, so a duplicate of the
query at similarity equal to its own still counts as a neighbour.

Ties: neighbours are ordered by decreasing similarity, then increasing reference index. The NumPy
backend also resolves ties at the k-th position by index (exact and deterministic); with faiss,
which of several references tied at the k-th position is returned is faiss's choice. Note that
BLAS may round the same dot product differently in different block shapes, so "tied" means equal
as computed.
"""

import numpy as np

from keras_dml.utils import is_available, optional_import

_BACKENDS = ("auto", "faiss", "numpy")
# Elements of one [chunk, num_references] similarity block of the NumPy backend (128 MB float32).
_NUMPY_BLOCK_ELEMENTS = 2**25
_FAISS_CHUNK = 8192


def resolve_backend(backend, task="search"):
    """Returns `"faiss"` or `"numpy"` for `backend` in `("auto", "faiss", "numpy")`.

    `"auto"` picks faiss for k-means when it is installed (much faster than scikit-learn) and the
    NumPy block path for the exact search: on CPU one float32 matmul block per chunk measured
    faster than `IndexFlatIP` (see `benchmarks/evaluation.py`), and it gives the first-hit rank,
    hence Recall@K at any K, without a K-sized heap.

    Args:
        backend: str. `"auto"`, `"faiss"` or `"numpy"`.
        task: str. `"search"` or `"kmeans"`, for `"auto"`. Defaults to `"search"`.

    Raises:
        ValueError: for an unknown backend name.
        MissingDependencyError: for `"faiss"` when faiss is not installed.
    """
    if backend not in _BACKENDS:
        raise ValueError(f"`backend` must be one of {_BACKENDS}. Received: backend={backend!r}")
    if backend == "auto":
        return "faiss" if task == "kmeans" and is_available("faiss") else "numpy"
    if backend == "faiss":
        optional_import("faiss", feature="the faiss evaluation backend")
    return backend


def default_chunk_size(backend, num_references):
    """Queries per chunk bounding the memory of one search step."""
    if backend == "faiss":
        return _FAISS_CHUNK
    return max(1, _NUMPY_BLOCK_ELEMENTS // max(1, num_references))


def sort_rows(indices, sims):
    """Sorts each row by decreasing similarity, then increasing index (only rows with ties)."""
    order = np.argsort(-sims, axis=1, kind="stable")
    indices, sims = np.take_along_axis(indices, order, 1), np.take_along_axis(sims, order, 1)
    tied = np.flatnonzero(np.any(sims[:, 1:] == sims[:, :-1], axis=1))
    if tied.size:
        order = np.lexsort((indices[tied], -sims[tied]), axis=-1)
        indices[tied] = np.take_along_axis(indices[tied], order, 1)
    return indices, sims


def _candidates(block, k, strides=64):
    """(rows, cols) of a superset of each row's top-k, found without a pass over the whole row.

    Columns are dealt into `G = n // strides` interleaved groups (group g = columns g, g + G,
    g + 2G, ...); the group maxima come from `strides` contiguous `np.maximum` calls. The k-th
    largest group maximum `t` is a lower bound of the k-th largest value (k groups each hold an
    element >= t), and every element >= t lies in a group whose maximum is >= t, so only those
    groups are gathered. Returns every element >= t: at least k per row, ties included.
    """
    rows_count, n = block.shape
    groups = n // strides
    if groups < max(k, 2 * strides):
        kth = np.partition(block, n - k, axis=1)[:, n - k]
        return np.nonzero(block >= kth[:, None])
    maxima = block[:, :groups].copy()
    for i in range(1, strides):
        np.maximum(maxima, block[:, i * groups : (i + 1) * groups], out=maxima)
    tail = n - strides * groups
    if tail:
        np.maximum(maxima[:, :tail], block[:, strides * groups :], out=maxima[:, :tail])
    bound = np.partition(maxima, groups - k, axis=1)[:, groups - k]
    group_rows, group_ids = np.nonzero(maxima >= bound[:, None])
    cols = group_ids[:, None] + groups * np.arange(strides + 1)[None, :]
    valid = cols < n
    cols = np.where(valid, cols, 0)
    rows = np.broadcast_to(group_rows[:, None], cols.shape)
    keep = valid & (block[rows, cols] >= bound[group_rows][:, None])
    return rows[keep], cols[keep]


# Above this k (MAP@R on datasets with large classes) a row-wise partition + sort beats the
# candidate gathering of `_candidates`, whose flat lexsort grows with c * k.
_LARGE_K = 256


def _topk_partition(block, k):
    """Top-k by `np.argpartition` and a per-row stable sort; `None` rows need the exact path.

    Returns `(indices, sims, exact)`: rows where more references tie at the k-th value than fit
    are marked inexact (the partition may have kept the wrong ones among the tied).
    """
    part = np.argpartition(-block, k - 1, axis=1)[:, :k]
    part.sort(axis=1)  # ascending index, so the stable sort below breaks ties by index
    values = np.take_along_axis(block, part, 1)
    order = np.argsort(-values, axis=1, kind="stable")
    indices = np.take_along_axis(part, order, 1).astype(np.int64)
    sims = np.take_along_axis(values, order, 1).astype(np.float32)
    kth = sims[:, -1:]
    exact = np.count_nonzero(block >= kth, axis=1) == k
    return indices, sims, exact


def topk_from_block(block, k):
    """Exact top-k of each row of `block` [c, n]; ties at the k-th value go to lower indices."""
    if k > _LARGE_K:
        indices, sims, exact = _topk_partition(block, k)
        if not exact.all():
            rows = np.flatnonzero(~exact)
            indices[rows], sims[rows] = _topk_candidates(block[rows], k)
        return indices, sims
    return _topk_candidates(block, k)


def _topk_candidates(block, k):
    """Exact top-k through `_candidates` (fast for small k), ties at the k-th to lower indices."""
    rows_count = block.shape[0]
    rows, cols = _candidates(block, k)
    values = block[rows, cols]
    order = np.lexsort((cols, -values, rows))
    rows, cols, values = rows[order], cols[order], values[order]
    position = np.arange(rows.size) - np.searchsorted(rows, np.arange(rows_count))[rows]
    keep = position < k
    indices = np.empty((rows_count, k), np.int64)
    sims = np.empty((rows_count, k), np.float32)
    indices[rows[keep], position[keep]] = cols[keep]
    sims[rows[keep], position[keep]] = values[keep]
    return indices, sims


def _drop_self(indices, sims, query_ids):
    """Removes each query's own index from its k+1 neighbours (else the last one) -> k columns."""
    rows, width = indices.shape
    is_self = indices == query_ids[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), width - 1)
    keep = np.ones_like(is_self)
    keep[np.arange(rows), drop] = False
    return indices[keep].reshape(rows, width - 1), sims[keep].reshape(rows, width - 1)


def iter_blocks(queries, references, exclude_self=False, chunk_size=None):
    """Yields `(start, block)`: similarity blocks [c, N] with each query's own entry at -inf."""
    chunk_size = chunk_size or default_chunk_size("numpy", references.shape[0])
    for start in range(0, queries.shape[0], chunk_size):
        yield start, similarity_block(queries, references, start, chunk_size, exclude_self)


def similarity_block(queries, references, start, chunk_size, exclude_self=False):
    """Similarities [c, N] of queries `start..start+chunk_size`, own entries at -inf."""
    block = queries[start : start + chunk_size] @ references.T
    if exclude_self:
        rows = np.arange(block.shape[0])
        block[rows, start + rows] = -np.inf
    return block


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
    if backend == "numpy":
        for start, block in iter_blocks(queries, references, exclude_self, chunk_size):
            yield (start, *topk_from_block(block, k))
        return
    faiss = optional_import("faiss", feature="the faiss evaluation backend")
    index = faiss.IndexFlatIP(references.shape[1])
    index.add(np.ascontiguousarray(references, dtype=np.float32))
    chunk_size = chunk_size or default_chunk_size(backend, num_refs)
    for start in range(0, queries.shape[0], chunk_size):
        chunk = np.ascontiguousarray(queries[start : start + chunk_size], dtype=np.float32)
        sims, indices = index.search(chunk, k + 1 if exclude_self else k)
        indices = indices.astype(np.int64)
        if exclude_self:
            query_ids = np.arange(start, start + chunk.shape[0])
            indices, sims = _drop_self(indices, sims, query_ids)
        indices, sims = sort_rows(indices, sims)
        yield start, indices, sims.astype(np.float32)
