"""`evaluate`: Recall@K, MAP@R, R-Precision and NMI of an embedding."""

import collections
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from keras_dml.evaluation.clustering import nmi
from keras_dml.evaluation.neighbors import resolve_backend, topk_from_block
from keras_dml.evaluation.retrieval_metrics import (
    class_index,
    first_hit_ranks,
    map_at_r_and_r_precision,
    relevant_counts,
)

METRICS = ("recall", "map@r", "r_precision", "nmi")
INDEXES = ("exact", "flat", "ivf", "hnsw")


def _search_workers():
    """Chunks processed at once by the NumPy search: the usable cores, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


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


def _make_searcher(index, shards, references):
    """The search object over `references`: an `EmbeddingIndex` or a `ShardedIndex`."""
    from keras_dml.search import EmbeddingIndex, ShardedIndex

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


def _ranks_from_lists(indices, labels, reference_labels):
    """First-hit rank (0-based) in each neighbour list; the int64 maximum when none matches."""
    found = reference_labels[np.maximum(indices, 0)] == labels[:, None]
    matches = found & (indices >= 0)
    return np.where(matches.any(axis=1), matches.argmax(axis=1), np.iinfo(np.int64).max)


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
):
    """Yields `(start, top-k_map indices or None, first-hit ranks)` per chunk of queries.

    Exact NumPy index with full-row blocks: the first-hit rank is counted exactly on the
    similarity block (any K). Otherwise (faiss, approximate, shards, or a gallery large enough
    that the references are tiled): the neighbours are searched up to max(K, k_map) and the rank
    is read from that list (a query without a match in it gets a rank beyond every K).
    """
    no_hit = np.iinfo(np.int64).max
    numpy_exact = getattr(searcher, "backend_name", None) == "exact"
    workers = _search_workers() if numpy_exact else 1
    if numpy_exact and (chunk_size or searcher.backend.plan()[1] >= references.shape[0]):
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
    available = references.shape[0] - (1 if exclude_self else 0)
    k = min(max(max(recall_at, default=1), k_map), available)
    size = chunk_size or (searcher.backend.plan()[0] if numpy_exact else 8192)

    def process_lists(start):
        chunk = queries[start : start + size]
        indices, _ = searcher.search_embeddings(chunk, k, exclude_self=exclude_self, start=start)
        labels = query_labels[start : start + indices.shape[0]]
        return start, indices[:, :k_map], _ranks_from_lists(indices, labels, reference_labels)

    yield from _map_in_threads(process_lists, range(0, queries.shape[0], size), workers)


class _Totals:
    """Running sums of Recall@K hits, MAP@R and R-Precision over chunks of queries."""

    def __init__(self, recall_at):
        self.hits = dict.fromkeys(recall_at, 0)
        self.map_sum = self.r_precision_sum = 0.0
        self.count = self.valid = 0

    def add(self, ranks, indices, labels, r, reference_labels):
        self.count += ranks.shape[0]
        for K in self.hits:
            self.hits[K] += int(np.count_nonzero(ranks < K))
        valid = r > 0
        self.valid += int(np.count_nonzero(valid))
        if indices is not None and valid.any():
            rows = indices[valid]
            matches = (reference_labels[np.maximum(rows, 0)] == labels[valid][:, None]) & (
                rows >= 0
            )
            map_r, r_prec = map_at_r_and_r_precision(matches, r[valid])
            self.map_sum += float(map_r.sum())
            self.r_precision_sum += float(r_prec.sum())

    def metrics(self, names):
        out = {}
        if "recall" in names:
            out.update({f"recall@{K}": hits / self.count for K, hits in self.hits.items()})
        if "map@r" in names:
            out["map@r"] = self.map_sum / self.valid if self.valid else float("nan")
        if "r_precision" in names:
            out["r_precision"] = self.r_precision_sum / self.valid if self.valid else float("nan")
        return out


def _approximation_report(
    searcher,
    queries,
    references,
    query_labels,
    reference_labels,
    r,
    exclude_self,
    sample,
    recall_at,
    k_map,
    metrics,
    seed,
):
    """Metric error of an approximate index against exact search on a seeded query sample."""
    from keras_dml.search.exact_topk import drop_self, exact_search

    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(queries.shape[0], min(int(sample), queries.shape[0]), replace=False))
    available = references.shape[0] - (1 if exclude_self else 0)
    k = min(max(max(recall_at, default=1), k_map), available)
    chunk = np.asarray(queries[rows], dtype=np.float32)
    labels, sample_r = query_labels[rows], r[rows]
    approx = np.empty((rows.size, k), np.int64)
    exact = np.empty((rows.size, k), np.int64)
    for i in range(rows.size):  # one query at a time: its own id for the self-exclusion
        row = slice(i, i + 1)
        approx[i] = searcher.search_embeddings(
            chunk[row], k, exclude_self=exclude_self, start=int(rows[i])
        )[0][0]
    if exclude_self:
        exact_idx, exact_sims = exact_search(chunk, references, k + 1)
        exact[:] = drop_self(exact_idx, exact_sims, rows)[0]
    else:
        exact[:] = exact_search(chunk, references, k)[0]
    report = {"approx_sample_size": int(rows.size), "approx_neighbor_k": int(k)}
    report["approx_neighbor_recall"] = float(
        np.mean([np.intersect1d(a[a >= 0], e).size / k for a, e in zip(approx, exact)])
    )
    totals = {}
    for name, indices in (("approx", approx), ("exact", exact)):
        total = _Totals(recall_at)
        ranks = _ranks_from_lists(indices, labels, reference_labels)
        total.add(ranks, indices[:, :k_map] if k_map else None, labels, sample_r, reference_labels)
        totals[name] = total.metrics(metrics)
    for key, exact_value in totals["exact"].items():
        report[f"approx_error_{key}"] = totals["approx"][key] - exact_value
    return report


def evaluate(
    embeddings,
    labels,
    query_embeddings=None,
    query_labels=None,
    recall_at=(1, 2, 4, 8),
    metrics=METRICS,
    backend="auto",
    chunk_size=None,
    normalize=True,
    kmeans_niter=20,
    kmeans_nredo=1,
    seed=0,
    index=None,
    shards=1,
    approx_sample=1000,
):
    """Evaluates retrieval (Recall@K, MAP@R, R-Precision) and clustering (NMI) quality.

    Similarity is the inner product; with `normalize=True` (default) the vectors are
    L2-normalised first, so it is the cosine similarity.

    Protocols:
    - `query_embeddings=None` (CUB, Cars, SOP): every sample queries all others; the query is
      removed from its own neighbours *by index*, so duplicates of it still count.
    - query/gallery (In-shop): `query_*` are searched in `embeddings` (the gallery); nothing
      is removed.

    Metrics (exact; the search is chunked over queries so memory stays bounded):
    - `recall@K`: the DML hit rate, the fraction of queries with at least one same-label
      reference among their K nearest neighbours. Every query counts, including one whose label
      has no other reference (it scores 0). A K beyond the available references uses them all.
    - `map@r`, `r_precision`: Musgrave et al. (2020). R = number of references sharing the query's
      label. Queries with R = 0 are excluded and counted in `num_excluded_queries`; if all are
      excluded the value is NaN.
    - `nmi`: k-means on the (gallery) embeddings with k = number of classes, compared with the
      labels by `sklearn.metrics.normalized_mutual_info_score`.
    Ties are ordered by reference index (see `keras_dml.evaluation.neighbors`).

    Args:
        embeddings: float array [N, D]. Reference (gallery) embeddings.
        labels: int array [N]. Their labels.
        query_embeddings: float array [Q, D] or `None`. Defaults to `None` (queries = references).
        query_labels: int array [Q] or `None`. Given together with `query_embeddings`.
        recall_at: sequence of positive int. K values of Recall@K. Defaults to `(1, 2, 4, 8)`.
        metrics: subset of `("recall", "map@r", "r_precision", "nmi")`. Defaults to all.
        backend: `"auto"`, `"faiss"` or `"numpy"`, for search and k-means. Defaults to
            `"auto"`: exact NumPy block search (faster than faiss `IndexFlatIP` on CPU in
            `benchmarks/evaluation.py`, any K at the same cost) and faiss k-means when installed
            (scikit-learn otherwise). `"faiss"` searches with `IndexFlatIP` up to max(K, R).
        chunk_size: int or `None`. Queries per search step; `None` bounds one step to a few
            hundred MB. Defaults to `None`.
        normalize: bool. L2-normalise all vectors first. Defaults to `True`.
        kmeans_niter: int. k-means iterations for NMI. Defaults to `20`.
        kmeans_nredo: int. k-means restarts for NMI. Defaults to `1`.
        seed: int. k-means seed (and of the approximation sample). Defaults to `0`.
        index: the search index (`keras_dml.search`): `"exact"` (NumPy), `"flat"` (faiss
            `IndexFlatIP`, GPU when faiss-gpu sees one), `"ivf"` or `"hnsw"` (faiss,
            approximate), an `EmbeddingIndex` (empty: a template of backend and options; filled:
            it must hold the (normalised) gallery) or a `ShardedIndex`. Defaults to `None`
            (`"exact"`, or `"flat"` with `backend="faiss"`).
        shards: int. Split the gallery into this many index shards, searched one by one and
            merged exactly (bounded memory per shard). Defaults to `1`.
        approx_sample: int. For an approximate index, the queries (seeded sample) on which its
            metrics are compared with exact search. Defaults to `1000`.

    Returns:
        dict with `recall@K` for every K, `map@r`, `r_precision`, `nmi` (those requested, floats),
        `num_queries` and `num_excluded_queries` (ints). With an approximate index also
        `approx_sample_size`, `approx_neighbor_recall` (overlap of its top-k with the exact
        top-k, k = `approx_neighbor_k`, the list length the metrics need) and
        `approx_error_<metric>` (its metric minus the exact one on the sample).

    Examples:
    >>> x = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9]], dtype="float32")
    >>> result = evaluate(x, np.array([0, 0, 1, 1]), recall_at=(1,), metrics=("recall", "map@r"))
    >>> result["recall@1"], result["map@r"]
    (1.0, 1.0)

    References:
        Musgrave, Belongie and Lim, "A Metric Learning Reality Check", ECCV 2020, Sec. 3.2
        (MAP@R, R-Precision); Song et al., "Deep Metric Learning via Lifted Structured Feature
        Embedding", CVPR 2016 (Recall@K and NMI protocol).
    """
    metrics = tuple(metrics)
    unknown = [name for name in metrics if name not in METRICS]
    if unknown or not metrics:
        raise ValueError(f"`metrics` must be a non-empty subset of {METRICS}. Received: {metrics}")
    recall_at = tuple(int(K) for K in recall_at)
    if "recall" in metrics and (not recall_at or min(recall_at) < 1):
        raise ValueError(f"`recall_at` must hold positive integers. Received: {recall_at}")
    if (query_embeddings is None) != (query_labels is None):
        raise ValueError("Pass both `query_embeddings` and `query_labels`, or neither.")
    references, reference_labels = _check_pair(embeddings, labels, "")
    exclude_self = query_embeddings is None
    if exclude_self:
        queries, query_labels = references, reference_labels
    else:
        queries, query_labels = _check_pair(query_embeddings, query_labels, "query_")
        if queries.shape[1] != references.shape[1]:
            raise ValueError(
                f"Query and gallery dimensions differ: {queries.shape[1]} vs {references.shape[1]}."
            )
    if normalize:
        references = _l2_normalize(references)
        queries = references if exclude_self else _l2_normalize(queries)

    r = relevant_counts(query_labels, reference_labels, exclude_self)
    results = {}
    retrieval = [name for name in metrics if name != "nmi"]
    if retrieval:
        available = references.shape[0] - (1 if exclude_self else 0)
        if available < 1:
            raise ValueError("Retrieval metrics need at least 2 samples (1 query + 1 reference).")
        if index is None:
            index = "flat" if resolve_backend(backend) == "faiss" else "exact"
        searcher = _make_searcher(index, shards, references)
        want_map = "map@r" in metrics or "r_precision" in metrics
        k_map = min(max(1, int(r.max())), available) if want_map else 0
        recall_at_used = recall_at if "recall" in metrics else ()
        totals = _Totals(recall_at)
        for start, indices, ranks in _search(
            queries,
            references,
            query_labels,
            reference_labels,
            exclude_self,
            searcher,
            chunk_size,
            recall_at_used,
            k_map,
        ):
            stop = start + ranks.shape[0]
            totals.add(ranks, indices, query_labels[start:stop], r[start:stop], reference_labels)
        results.update(totals.metrics(retrieval))
        if not searcher.exact:
            results.update(
                _approximation_report(
                    searcher,
                    queries,
                    references,
                    query_labels,
                    reference_labels,
                    r,
                    exclude_self,
                    approx_sample,
                    recall_at_used,
                    k_map,
                    retrieval,
                    seed,
                )
            )
    if "nmi" in metrics:
        results["nmi"] = nmi(
            references,
            reference_labels,
            resolve_backend(backend, "kmeans"),
            kmeans_niter,
            kmeans_nredo,
            seed,
        )
    results["num_queries"] = int(queries.shape[0])
    results["num_excluded_queries"] = int(np.count_nonzero(r <= 0))
    return results
