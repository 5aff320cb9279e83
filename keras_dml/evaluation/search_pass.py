"""The chunked search pass of `evaluate`: top-k lists and first-hit ranks per chunk of queries."""

import numpy as np

from keras_dml.evaluation.neighbors import topk_from_block
from keras_dml.evaluation.parallel import _map_in_threads, _search_workers
from keras_dml.evaluation.retrieval_metrics import class_index, first_hit_ranks
from keras_dml.search.rerank import rerank_search


def _ranks_from_lists(indices, labels, reference_labels):
    """First-hit rank (0-based) in each neighbour list; the int64 maximum when none matches."""
    found = reference_labels[np.maximum(indices, 0)] == labels[:, None]
    matches = found & (indices >= 0)
    return np.where(matches.any(axis=1), matches.argmax(axis=1), np.iinfo(np.int64).max)


def _search_depth(num_references, exclude_self, recall_at, k_map):
    """Neighbours searched per query when the ranks are read from top-k lists.

    Args:
        num_references: int. Rows of the gallery.
        exclude_self: bool. Each query is a gallery row, removed from its own neighbours.
        recall_at: sequence of int. The K of Recall@K (may be empty).
        k_map: int. Neighbours MAP@R and R-Precision read (0 when not wanted).

    Returns:
        int, max(K, k_map) capped at the references a query can have.

    Examples:
    >>> _search_depth(10, True, (1, 2, 4, 8, 16), 3)
    9
    >>> _search_depth(10, False, (), 0)
    1
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

    With `reranking` (`(reranker, prepared)`, see `keras_dml.search.rerank`) the lists are the
    re-ranked top max(K, k_map) of each query, read as below.

    Exact NumPy index with full-row blocks: the first-hit rank is counted exactly on the
    similarity block (any K). Otherwise (faiss, approximate, shards, or a gallery large enough
    that the references are tiled): the neighbours are searched up to max(K, k_map) and the rank
    is read from that list (a query without a match in it gets a rank beyond every K).
    """
    no_hit = np.iinfo(np.int64).max
    numpy_exact = getattr(searcher, "backend_name", None) == "exact"
    workers = _search_workers() if numpy_exact else 1
    if (
        reranking is None
        and numpy_exact
        and (chunk_size or searcher.backend.plan()[1] >= references.shape[0])
    ):
        class_info = class_index(reference_labels)
        backend = searcher.backend
        size = chunk_size or backend.plan()[0]

        def process(start):
            block = backend.block(queries, start, size, exclude_self)
            labels = query_labels[start : start + block.shape[0]]
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

    yield from _map_in_threads(process_lists, range(0, queries.shape[0], size), workers)
