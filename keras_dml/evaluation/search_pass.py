"""The search of `evaluate`: its index, and the chunked pass of top-k lists and first-hit ranks."""

import collections
import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import threadpool_limits

from keras_dml.evaluation.neighbors import topk_from_block
from keras_dml.evaluation.retrieval_metrics import class_index, first_hit_ranks
from keras_dml.search.backends import BACKENDS
from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.rerank import rerank_search
from keras_dml.search.sharded import ShardedIndex

# The index names `evaluate` accepts: the search backends (`keras_dml.search.backends`).
INDEXES = BACKENDS
# Up to this depth (max(K of Recall@K, neighbours MAP@R reads)) the exact full-row pass reads the
# first-hit ranks from the top-k lists, which it computes anyway (one pass over each similarity
# block); deeper lists cost more than `first_hit_ranks`' two counting passes, which give the rank
# at any K. At 50,000 x 128 on 2 cores, the lists, the reused block buffer below and the
# group-maxima top-k (`exact_topk.block_topk`) took the evaluation from 4.2x to 1.6x the bare
# matrix product.
_LIST_RANK_DEPTH = 256


def _make_searcher(index, shards, references):
    """The search object over `references`: an `EmbeddingIndex` or a `ShardedIndex`."""
    if isinstance(index, (EmbeddingIndex, ShardedIndex)):
        if len(index) == 0 and isinstance(index, EmbeddingIndex):
            template = index
            index = EmbeddingIndex(backend=template.backend_name, **template.backend_options)
            return index.add(references)
        if len(index) != references.shape[0] or index.dim != references.shape[1]:
            raise ValueError(
                f"The index holds {len(index)} x {index.dim} vectors but the gallery is "
                f"{references.shape[0]} x {references.shape[1]}; build the index over the same "
                "(normalised) embeddings, or pass an empty index or a name such as index='ivf'."
            )
        return index
    if index not in INDEXES:
        raise ValueError(
            f"`index` must be one of {INDEXES} or an index object. Received: {index!r}"
        )
    if not isinstance(shards, (int, np.integer)) or not 1 <= shards <= references.shape[0]:
        raise ValueError(
            f"`shards` must be an integer in [1, {references.shape[0]}] (the gallery size). "
            f"Received: shards={shards!r}"
        )
    bounds = np.linspace(0, references.shape[0], int(shards) + 1).astype(int)
    parts = [
        EmbeddingIndex.from_embeddings(references[a:b], backend=index)
        for a, b in zip(bounds[:-1], bounds[1:])
    ]
    return parts[0] if len(parts) == 1 else ShardedIndex(parts)


def _usable_cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _search_workers():
    """Chunks processed at once by the NumPy search: the usable cores, at most 4."""
    return max(1, min(4, _usable_cores()))


def _map_in_threads(function, items, workers):
    """`map(function, items)` in order, with at most `workers` items in flight."""
    if workers == 1:
        yield from map(function, items)
        return
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = collections.deque()
        for item in items:
            pending.append(pool.submit(function, item))
            if len(pending) >= workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


@contextlib.contextmanager
def _blas_threads_shared(workers):
    """BLAS limited to `cores // workers` threads while `workers` threads multiply, lifted after."""
    if workers == 1:
        yield
        return
    with threadpool_limits(max(1, _usable_cores() // workers), user_api="blas"):
        yield


def _ranks_from_lists(indices, labels, reference_labels):
    """First-hit rank (0-based) in each neighbour list; the int64 maximum when none matches."""
    found = reference_labels[np.maximum(indices, 0)] == labels[:, None]
    matches = found & (indices >= 0)
    return np.where(matches.any(axis=1), matches.argmax(axis=1), np.iinfo(np.int64).max)


def _search_depth(num_references, exclude_self, recall_at, k_map):
    """Neighbours per query for ranks read from lists: max(K, k_map), capped at the references.

    Examples:
    >>> _search_depth(10, True, (1, 2, 4, 8, 16), 3)
    9
    """
    available = num_references - (1 if exclude_self else 0)
    return min(max(max(recall_at, default=1), k_map), available)


def _search(
    queries,
    references,
    query_labels,
    reference_labels,
    exclude_self,
    searcher,
    chunk_size,
    recall_at,
    k_map,
    reranking=None,
):
    """Yields `(start, top-k_map indices or None, first-hit ranks)` per chunk of queries.

    The exact NumPy index with full-row blocks counts ranks on the block (any K); other searches
    (and `reranking`) read them from the top max(K, k_map) lists.
    """
    no_hit = np.iinfo(np.int64).max
    numpy_exact = getattr(searcher, "backend_name", None) == "exact"
    workers = _search_workers() if numpy_exact else 1
    if (
        reranking is None
        and numpy_exact
        and (chunk_size or searcher.backend.plan()[1] >= references.shape[0])
    ):
        backend = searcher.backend
        size = chunk_size or backend.plan()[0]
        depth = _search_depth(references.shape[0], exclude_self, recall_at, k_map)
        ranks_from_lists = bool(recall_at) and depth <= _LIST_RANK_DEPTH
        class_info = None if ranks_from_lists else class_index(reference_labels)
        scratch = threading.local()

        def process(start):
            # One block buffer per worker thread: a fresh 128 MB array per block spent more
            # time page-faulting than the matrix product that fills it.
            if getattr(scratch, "block", None) is None:
                scratch.block = np.empty((size, references.shape[0]), np.float32)
            block = backend.block(queries, start, size, exclude_self, out=scratch.block)
            labels = query_labels[start : start + block.shape[0]]
            if ranks_from_lists:
                indices = topk_from_block(block, depth)[0]
                ranks = _ranks_from_lists(indices, labels, reference_labels)
                return start, (indices[:, :k_map] if k_map else None), ranks
            ranks = (
                first_hit_ranks(block, start, labels, class_info, exclude_self)
                if recall_at
                else np.full(block.shape[0], no_hit)
            )
            indices = topk_from_block(block, k_map)[0] if k_map else None
            return start, indices, ranks

        # NumPy's comparison and partition passes are single-threaded but release the GIL:
        # a few chunks in flight use every core (memory: one similarity block per worker).
        starts = range(0, queries.shape[0], size)
        with _blas_threads_shared(workers):
            yield from _map_in_threads(process, starts, workers)
        return
    k = _search_depth(references.shape[0], exclude_self, recall_at, k_map)
    size = chunk_size or (searcher.backend.plan()[0] if numpy_exact else 8192)

    def process_lists(start):
        chunk = queries[start : start + size]
        if reranking is not None:
            rows = np.arange(start, start + chunk.shape[0]) if exclude_self else None
            indices = rerank_search(*reranking, chunk, k, rows)[0]
        else:
            indices = searcher.search_embeddings(chunk, k, exclude_self=exclude_self, start=start)[
                0
            ]
        labels = query_labels[start : start + indices.shape[0]]
        return start, indices[:, :k_map], _ranks_from_lists(indices, labels, reference_labels)

    with _blas_threads_shared(workers):
        yield from _map_in_threads(process_lists, range(0, queries.shape[0], size), workers)
