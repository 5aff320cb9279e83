"""`evaluate`: Recall@K, MAP@R, R-Precision and NMI of an embedding."""

import warnings

import numpy as np

from keras_dml.evaluation.approximation import _approximation_report
from keras_dml.evaluation.clustering import kmeans_description, nmi
from keras_dml.evaluation.errors import NonFiniteEmbeddingsError
from keras_dml.evaluation.neighbors import resolve_backend
from keras_dml.evaluation.retrieval_metrics import _Totals, relevant_counts
from keras_dml.evaluation.search_pass import INDEXES, _make_searcher, _search
from keras_dml.pairs.distances import l2_normalize
from keras_dml.search.rerank import resolve_rerank

__all__ = ["INDEXES", "METRICS", "evaluate"]

METRICS = ("recall", "map@r", "r_precision", "nmi")


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
    kmeans_nredo=None,
    seed=0,
    index=None,
    shards=1,
    approx_sample=1000,
    rerank=None,
):
    """Recall@K, MAP@R, R-Precision and NMI of an embedding (definitions: docs/evaluation.md).

    Args:
        embeddings: float array [N, D]. Reference (gallery) embeddings.
        labels: int array [N]. Their labels.
        query_embeddings: float array [Q, D] or `None`. Defaults to `None` (each reference
            queries the others, itself left out by index).
        query_labels: int array [Q] or `None`. Given together with `query_embeddings`.
        recall_at: sequence of positive int. K values of Recall@K. Defaults to `(1, 2, 4, 8)`.
        metrics: subset of `METRICS`. Defaults to all.
        backend: `"auto"`, `"faiss"` or `"numpy"`: the exact search. Defaults to `"auto"` (NumPy).
        chunk_size: int or `None`. Queries per search step. Defaults to `None` (bounded memory).
        normalize: bool. L2-normalise all vectors first (cosine similarity). Defaults to `True`.
        kmeans_niter: int. k-means iterations for NMI. Defaults to `20`.
        kmeans_nredo: int or `None`. k-means runs for NMI. Defaults to `None` (`default_restarts`).
        seed: int. k-means seed (and of the approximation sample). Defaults to `0`.
        index: `"exact"`, `"flat"`, `"ivf"`, `"hnsw"`, an `EmbeddingIndex` (empty: a template)
            or a `ShardedIndex`. Defaults to `None` (`"exact"`; `"flat"` with `backend="faiss"`).
        shards: int. Gallery shards, searched one by one and merged exactly. Defaults to `1`.
        approx_sample: int. Queries on which an approximate index is compared with exact search.
            Defaults to `1000`.
        rerank: `None`, a name of `keras_dml.search.rerank` or a dict with its parameters.
            Defaults to `None`.

    Returns:
        dict: `recall@K`, `map@r`, `r_precision`, `nmi` and `nmi_kmeans` (those requested),
        `num_queries`, `num_excluded_queries`; `approx_*` for an approximate index; `rerank`.

    Raises:
        NonFiniteEmbeddingsError: an embedding holds NaN or Inf (a `ValueError`).
        ValueError: shapes, labels or arguments that do not fit together.

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
    resolve_backend(backend)  # checks the name (also when only NMI, which ignores it, is asked)
    reranker = resolve_rerank(rerank)
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
        references = l2_normalize(references)
        queries = references if exclude_self else l2_normalize(queries)

    r = relevant_counts(query_labels, reference_labels, exclude_self)
    results = {}
    retrieval = [name for name in metrics if name != "nmi"]
    if retrieval:
        available = references.shape[0] - (1 if exclude_self else 0)
        if available < 1:
            classes = sorted({int(label) for label in reference_labels})
            raise ValueError(
                "Retrieval metrics need at least 2 samples (1 query + 1 reference). Received "
                f"{references.shape[0]} sample(s), of class(es) {classes}."
            )
        if index is None:
            index = "flat" if resolve_backend(backend) == "faiss" else "exact"
        searcher = _make_searcher(index, shards, references)
        reranking = None
        if reranker is not None:
            reranker.check_gallery(references.shape[0])
            reranking = (reranker, reranker.prepare(searcher, references))
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
            reranking,
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
        results["nmi"] = nmi(references, reference_labels, kmeans_niter, kmeans_nredo, seed)
        results["nmi_kmeans"] = kmeans_description(
            references.shape[0],
            np.unique(reference_labels).size,
            references.shape[1],
            kmeans_niter,
            kmeans_nredo,
            seed,
        )
    if reranker is not None:
        results["rerank"] = describe_rerank(reranker)
    results["num_queries"] = int(queries.shape[0])
    results["num_excluded_queries"] = int(np.count_nonzero(r <= 0))
    if results["num_excluded_queries"] == results["num_queries"]:
        _warn_no_valid_query(results, reference_labels)
    return results


def _warn_no_valid_query(results, reference_labels):
    """No query has a relevant reference: retrieval and NMI are NaN, and a warning says why."""
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


def describe_rerank(reranker):
    """`"name(key=value, ...)"`: the re-ranking that gave the metrics, as a one-line string."""
    config = reranker.get_config()
    name = config.pop("name")
    return f"{name}({', '.join(f'{key}={value:g}' for key, value in config.items())})"


def _check_pair(embeddings, labels, what):
    """`(float32 embeddings, labels)` of `evaluate`, or a one-line error naming `what`."""
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
        raise NonFiniteEmbeddingsError(
            f"`{what}embeddings` contains NaN or Inf values; check the model output."
        )
    return embeddings, labels
