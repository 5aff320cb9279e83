"""Metric error of an approximate index against exact search, on a seeded sample of queries."""

import numpy as np

from keras_dml.evaluation.retrieval_metrics import _Totals
from keras_dml.evaluation.search_pass import _ranks_from_lists, _search_depth
from keras_dml.search.exact_topk import drop_self, exact_search


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
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(queries.shape[0], min(int(sample), queries.shape[0]), replace=False))
    k = _search_depth(references.shape[0], exclude_self, recall_at, k_map)
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
