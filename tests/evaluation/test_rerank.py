"""`evaluate(..., rerank=...)`: metrics of re-ranked lists, both protocols; default unchanged."""

import numpy as np
import pytest

from keras_dml.evaluation import evaluate
from tests.support.rerank_reference import NaiveKReciprocal, naive_query_expansion, normalise

METRICS = ("recall", "map@r", "r_precision")


def data():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 7, 60)
    x = (rng.normal(size=(7, 6))[labels] + 0.9 * rng.normal(size=(60, 6))).astype(np.float32)
    return x, labels


def test_default_results_are_bit_identical_to_before_reranking_existed():
    """The numbers below were printed by `evaluate` at commit 309a2cd (before `rerank`)."""
    x, labels = data()
    assert evaluate(x, labels, metrics=METRICS) == {
        "recall@1": 0.7333333333333333,
        "recall@2": 0.8166666666666667,
        "recall@4": 0.8833333333333333,
        "recall@8": 0.9666666666666667,
        "map@r": 0.44138627488032256,
        "r_precision": 0.5288095238095238,
        "num_queries": 60,
        "num_excluded_queries": 0,
    }
    query = evaluate(x[:45], labels[:45], x[45:], labels[45:], metrics=METRICS, rerank=None)
    assert query == {
        "recall@1": 0.6,
        "recall@2": 0.7333333333333333,
        "recall@4": 0.9333333333333333,
        "recall@8": 1.0,
        "map@r": 0.4278849206349207,
        "r_precision": 0.5427777777777779,
        "num_queries": 15,
        "num_excluded_queries": 0,
    }


def metrics_of_lists(lists, query_labels, reference_labels, r):
    """Recall@K and MAP@R / R-Precision (Musgrave et al. 2020) of given neighbour lists."""
    match = reference_labels[np.asarray(lists)] == query_labels[:, None]
    out = {f"recall@{K}": float(match[:, :K].any(axis=1).mean()) for K in (1, 2, 4, 8)}
    maps, precisions = [], []
    for row, count in zip(match, r):
        relevant = row[:count]
        precision = np.cumsum(relevant) / np.arange(1, count + 1)
        maps.append((precision * relevant).sum() / count)
        precisions.append(relevant.sum() / count)
    out["map@r"], out["r_precision"] = float(np.mean(maps)), float(np.mean(precisions))
    return out


def check(result, want):
    for key, value in want.items():
        assert result[key] == pytest.approx(value, abs=1e-12), key


def test_leave_one_out_metrics_are_those_of_the_naive_reranked_lists():
    x, labels = data()
    unit = normalise(x.astype(np.float64))
    r = np.bincount(labels)[labels] - 1
    depth = max(8, int(r.max()))
    rows = np.arange(60)
    lists = naive_query_expansion(unit, unit, depth, 3, None, self_rows=rows)[0]
    result = evaluate(x, labels, metrics=METRICS, rerank={"name": "aqe", "top_n": 3})
    check(result, metrics_of_lists(lists, labels, labels, r))
    assert result["rerank"] == "aqe(top_n=3)"
    naive = NaiveKReciprocal(unit, 20, 6, 0.3)
    lists = [naive.rank_gallery_row(p, depth)[0] for p in rows]
    result = evaluate(x, labels, metrics=METRICS, rerank="k_reciprocal")
    check(result, metrics_of_lists(lists, labels, labels, r))
    assert result["recall@1"] != evaluate(x, labels, metrics=METRICS)["recall@1"]


def test_query_gallery_metrics_are_those_of_the_naive_reranked_lists():
    x, labels = data()
    unit = normalise(x.astype(np.float64))
    gallery, queries = unit[:45], unit[45:]
    r = np.array([np.count_nonzero(labels[:45] == label) for label in labels[45:]])
    depth = max(8, int(r.max()))
    naive = NaiveKReciprocal(gallery, 20, 6, 0.3)
    lists = [naive.rank_query(q, depth)[0] for q in queries]
    result = evaluate(
        x[:45], labels[:45], x[45:], labels[45:], metrics=METRICS, rerank="k_reciprocal"
    )
    check(result, metrics_of_lists(lists, labels[45:], labels[:45], r))


def test_unknown_rerank_is_refused_before_any_search():
    x, labels = data()
    with pytest.raises(ValueError, match=r"Unknown rerank 'qe'.*Did you mean 'aqe'\?"):
        evaluate(x, labels, metrics=("nmi",), rerank="qe")


@pytest.mark.parametrize("method", ["aqe", "alpha_qe", "dba", "k_reciprocal"])
def test_reranking_is_the_same_over_shards_and_the_faiss_flat_index(method):
    x, labels = data()
    spec = {"name": method, "top_n": 4} if method != "k_reciprocal" else method
    want = evaluate(x, labels, metrics=METRICS, rerank=spec)
    assert evaluate(x, labels, metrics=METRICS, rerank=spec, shards=3) == want
    flat = evaluate(x, labels, metrics=METRICS, rerank=spec, index="flat")
    check(flat, {k: v for k, v in want.items() if k != "rerank"})
