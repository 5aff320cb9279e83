"""`evaluate`: Recall@K, MAP@R, R-Precision and NMI of an embedding."""

import collections
import os
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from keras_dml.evaluation.clustering import nmi
from keras_dml.evaluation.neighbors import (
    default_chunk_size,
    iter_neighbors,
    resolve_backend,
    similarity_block,
    topk_from_block,
)
from keras_dml.evaluation.retrieval_metrics import (
    class_index,
    first_hit_ranks,
    map_at_r_and_r_precision,
    relevant_counts,
)

METRICS = ("recall", "map@r", "r_precision", "nmi")


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


def _search(
    queries,
    references,
    query_labels,
    reference_labels,
    exclude_self,
    backend,
    chunk_size,
    recall_at,
    k_map,
):
    """Yields `(start, top-k_map indices or None, first-hit ranks)` per chunk of queries.

    NumPy: the first-hit rank is counted exactly on the similarity block (any K). faiss: the
    neighbours are searched up to max(K, k_map) and the rank is read from that list (a query
    without a match in it gets a rank beyond every K).
    """
    backend = resolve_backend(backend)
    no_hit = np.iinfo(np.int64).max
    if backend == "numpy":
        class_info = class_index(reference_labels)

        size = chunk_size or default_chunk_size("numpy", references.shape[0])

        def process(start):
            block = similarity_block(queries, references, start, size, exclude_self)
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
        yield from _map_in_threads(process, starts, _search_workers())
        return
    available = references.shape[0] - (1 if exclude_self else 0)
    k = min(max(max(recall_at, default=1), k_map), available)
    for start, indices, _ in iter_neighbors(
        queries, references, k, exclude_self, backend, chunk_size
    ):
        labels = query_labels[start : start + indices.shape[0]]
        matches = reference_labels[indices] == labels[:, None]
        ranks = np.where(matches.any(axis=1), matches.argmax(axis=1), no_hit)
        yield start, indices[:, :k_map], ranks


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
        seed: int. k-means seed. Defaults to `0`.

    Returns:
        dict with `recall@K` for every K, `map@r`, `r_precision`, `nmi` (those requested, floats),
        `nmi_kmeans` (str, with `nmi`: which k-means gave it; NMI depends on the k-means run: on
        the digits test embeddings of the zoo's six digits models, seeds 0-2 of faiss and
        scikit-learn k-means gave NMIs up to 0.11 apart with 20 iterations x 1 run and up to 0.09
        apart with 100 x 5, so compare NMIs only when `nmi_kmeans` is the same),
        `num_queries` and `num_excluded_queries` (ints).

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
        want_map = "map@r" in metrics or "r_precision" in metrics
        k_map = min(max(1, int(r.max())), available)
        hits = dict.fromkeys(recall_at, 0)
        map_sum = r_precision_sum = 0.0
        for start, indices, ranks in _search(
            queries,
            references,
            query_labels,
            reference_labels,
            exclude_self,
            backend,
            chunk_size,
            recall_at if "recall" in metrics else (),
            k_map if want_map else 0,
        ):
            for K in recall_at:
                hits[K] += int(np.count_nonzero(ranks < K))
            chunk_r = r[start : start + ranks.shape[0]]
            valid = chunk_r > 0
            if want_map and valid.any():
                chunk_labels = query_labels[start : start + ranks.shape[0]]
                matches = reference_labels[indices[valid]] == chunk_labels[valid][:, None]
                map_r, r_prec = map_at_r_and_r_precision(matches, chunk_r[valid])
                map_sum += float(map_r.sum())
                r_precision_sum += float(r_prec.sum())
        num_valid = int(np.count_nonzero(r > 0))
        if "recall" in metrics:
            for K in recall_at:
                results[f"recall@{K}"] = hits[K] / queries.shape[0]
        if "map@r" in metrics:
            results["map@r"] = map_sum / num_valid if num_valid else float("nan")
        if "r_precision" in metrics:
            results["r_precision"] = r_precision_sum / num_valid if num_valid else float("nan")
    if "nmi" in metrics:
        kmeans_backend = resolve_backend(backend, "kmeans")
        results["nmi"] = nmi(
            references,
            reference_labels,
            kmeans_backend,
            kmeans_niter,
            kmeans_nredo,
            seed,
        )
        results["nmi_kmeans"] = (
            f"{'faiss' if kmeans_backend == 'faiss' else 'scikit-learn'} k-means, seed {seed}, "
            f"{kmeans_niter} iterations, best of {kmeans_nredo}"
        )
    results["num_queries"] = int(queries.shape[0])
    results["num_excluded_queries"] = int(np.count_nonzero(r <= 0))
    if results["num_excluded_queries"] == results["num_queries"]:
        _warn_no_valid_query(results, reference_labels)
    return results


def _warn_no_valid_query(results, reference_labels):
    """No query has a relevant reference: retrieval and NMI are undefined, say so (and NaN them).

    Recall@K would read 0 and NMI 1.0 (every sample its own class and cluster), numbers that look
    like results; they are set to NaN and a warning gives the counts.
    """
    num_classes = len(np.unique(reference_labels))
    for key in results:
        if key.startswith("recall@") or key == "nmi":
            results[key] = float("nan")
    warnings.warn(
        f"No valid query: none of the {results['num_queries']} queries has another image of its "
        f"class among the {len(reference_labels)} references ({num_classes} classes), so "
        "Recall@K, MAP@R, R-Precision and NMI are undefined (reported as NaN). Evaluate on a "
        "split where classes have 2 or more images.",
        stacklevel=3,
    )
