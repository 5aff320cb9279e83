"""`evaluate` against a naive exact implementation written with plain loops."""

import numpy as np
import pytest

from keras_dml.evaluation import evaluate, iter_neighbors, lloyd_kmeans, nmi
from keras_dml.utils import is_available

BACKENDS = [
    "numpy",
    pytest.param(
        "faiss", marks=pytest.mark.skipif(not is_available("faiss"), reason="faiss missing")
    ),
]


def _normalize(x):
    x = np.asarray(x, np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def naive_retrieval(
    refs, ref_labels, queries=None, query_labels=None, recall_at=(1, 2, 4, 8), normalize=True
):
    """Loops over queries; neighbours sorted by (-similarity, index); self removed by index."""
    prepare = _normalize if normalize else (lambda v: np.asarray(v, np.float32))
    refs = prepare(refs)
    self_protocol = queries is None
    queries, query_labels = (
        (refs, ref_labels) if self_protocol else (prepare(queries), query_labels)
    )
    hits = dict.fromkeys(recall_at, 0)
    map_sum = rp_sum = 0.0
    excluded = 0
    for i in range(len(queries)):
        candidates = [j for j in range(len(refs)) if not (self_protocol and j == i)]
        sims = {j: float(np.dot(queries[i].astype(np.float64), refs[j])) for j in candidates}
        order = sorted(candidates, key=lambda j: (-sims[j], j))
        relevant = [ref_labels[j] == query_labels[i] for j in order]
        for K in recall_at:
            hits[K] += any(relevant[:K])
        R = sum(relevant)
        if R == 0:
            excluded += 1
            continue
        found, precision_sum = 0, 0.0
        for position in range(R):
            if relevant[position]:
                found += 1
                precision_sum += found / (position + 1)
        map_sum += precision_sum / R
        rp_sum += found / R
    valid = len(queries) - excluded
    result = {f"recall@{K}": hits[K] / len(queries) for K in recall_at}
    result["map@r"] = map_sum / valid
    result["r_precision"] = rp_sum / valid
    result["num_excluded_queries"] = excluded
    return result


def _data(seed=0, n=120, classes=15, dim=16, noise=1.0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, size=n)
    centres = rng.normal(size=(classes, dim))
    return (centres[labels] + noise * rng.normal(size=(n, dim))).astype(np.float32), labels


def _assert_matches(result, expected):
    for key, value in expected.items():
        assert result[key] == pytest.approx(value, abs=1e-9), key


@pytest.mark.parametrize("backend", BACKENDS)
def test_matches_naive_on_tie_free_data(backend):
    x, labels = _data()
    recall_at = (1, 2, 4, 8, 16, 119, 500)  # 119 = every other sample; 500 > available
    result = evaluate(x, labels, recall_at=recall_at, backend=backend, chunk_size=17)
    _assert_matches(result, naive_retrieval(x, labels, recall_at=recall_at))
    assert result["num_queries"] == 120
    assert 0.2 < result["recall@1"] < 0.95, "test data should give non-trivial recall"


def test_recall_at_k_deeper_than_every_class_matches_naive():
    """Recall@K with K larger than any class (R <= 3): the ranks the exact pass reads from its
    top-k lists must come from lists as deep as the largest K, not as deep as MAP@R needs."""
    x, labels = _data(seed=4, n=150, classes=60, noise=3.0)
    recall_at = (1, 8, 32, 100)
    result = evaluate(x, labels, recall_at=recall_at, backend="numpy", chunk_size=40)
    expected = naive_retrieval(x, labels, recall_at=recall_at)
    _assert_matches({k: result[k] for k in expected}, expected)
    assert result["recall@1"] < result["recall@32"] < 1.0, "test data should spread the ranks"


def test_matches_naive_with_duplicates_and_ties():
    """Exact duplicates and many tied similarities: order by index, self removed by index.

    Small integer vectors without normalisation make every inner product exact in float32 (any
    summation order), so ties are real ties under every chunking.
    """
    rng = np.random.default_rng(1)
    x = rng.integers(-2, 3, size=(40, 4)).astype(np.float32)
    labels = rng.integers(0, 6, size=40)
    x = np.concatenate([x, x[:20], x[:10]])
    labels = np.concatenate([labels, (labels[:20] + 1) % 6, labels[:10]])  # some dups relabelled
    expected = naive_retrieval(x, labels, recall_at=(1, 2, 3, 5), normalize=False)
    for chunk_size in (None, 7, 1):
        result = evaluate(
            x,
            labels,
            recall_at=(1, 2, 3, 5),
            backend="numpy",
            chunk_size=chunk_size,
            normalize=False,
            metrics=("recall", "map@r", "r_precision"),
        )
        _assert_matches(result, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_self_removed_by_index_not_by_rank(backend):
    """A duplicate at similarity 1 is a real neighbour; dropping "the first neighbour" is wrong."""
    v, w = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    x = np.stack([v, v, v, w, w, 0.9 * v + 0.1 * w]).astype(np.float32)
    labels = np.array([0, 1, 0, 2, 2, 1])
    for _, indices, sims in iter_neighbors(x, x, 5, exclude_self=True, backend=backend):
        for i in range(6):
            assert i not in indices[i]
        assert set(indices[0, :2]) == {1, 2} and set(indices[1, :2]) == {0, 2}
        np.testing.assert_allclose(sims[0, :2], 1.0, rtol=1e-6)
    result = evaluate(x, labels, recall_at=(1, 2), metrics=("recall",), backend=backend)
    # Queries 0 and 2 find each other or 1; query 1 has duplicates 0, 2 (label 0) first.
    expected = naive_retrieval(x, labels, recall_at=(1, 2))
    assert result["recall@2"] == pytest.approx(expected["recall@2"])
    assert result["recall@2"] == pytest.approx(5 / 6)  # query 1 misses: its match 5 is 3rd


@pytest.mark.parametrize("backend", BACKENDS)
def test_query_gallery_protocol(backend):
    gallery, gallery_labels = _data(seed=2, n=90, classes=12)
    queries, query_labels = _data(seed=3, n=30, classes=14)  # labels 12, 13 absent from gallery
    result = evaluate(gallery, gallery_labels, queries, query_labels, backend=backend)
    expected = naive_retrieval(gallery, gallery_labels, queries, query_labels)
    _assert_matches(result, expected)
    assert result["num_queries"] == 30
    assert result["num_excluded_queries"] == int(np.isin(query_labels, [12, 13]).sum()) > 0


def test_query_gallery_does_not_remove_identical_point():
    x = _normalize(np.eye(4))
    result = evaluate(x, np.arange(4), x, np.arange(4), recall_at=(1,), backend="numpy")
    assert result["recall@1"] == 1.0 and result["map@r"] == 1.0


def test_excluded_queries_and_large_k():
    x, labels = _data(seed=4, n=30, classes=5)
    labels = labels.copy()
    labels[[0, 1, 2]] = [100, 101, 102]  # three singleton classes
    result = evaluate(x, labels, recall_at=(1, 1000), metrics=("recall", "map@r", "r_precision"))
    expected = naive_retrieval(x, labels, recall_at=(1, 1000))
    _assert_matches(result, expected)
    assert result["num_excluded_queries"] == 3
    assert result["recall@1000"] == pytest.approx(27 / 30)  # singletons never hit


def test_unnormalized_inner_product():
    x = np.array([[1.0, 0.0], [3.0, 3.0], [0.9, 0.2]], np.float32)
    labels = np.array([0, 1, 0])
    cosine = evaluate(x, labels, recall_at=(1,), metrics=("recall",), backend="numpy")
    dot = evaluate(x, labels, recall_at=(1,), metrics=("recall",), backend="numpy", normalize=False)
    assert cosine["recall@1"] == pytest.approx(2 / 3)  # 0 <-> 2 (cos .976), 1 -> 2
    assert dot["recall@1"] == pytest.approx(0.0)  # the large vector 1 wins: 0 -> 1, 2 -> 1


def test_nmi_separated_and_random():
    rng = np.random.default_rng(5)
    labels = np.repeat(np.arange(8), 40)
    centres = 10 * np.eye(16)[:8]
    separated = (centres[labels] + 0.1 * rng.normal(size=(320, 16))).astype(np.float32)
    assert nmi(separated, labels) == pytest.approx(1.0, abs=1e-6)
    noise = rng.normal(size=(320, 16)).astype(np.float32)
    assert nmi(noise, labels) < 0.3
    result = evaluate(separated, labels, metrics=("nmi",))
    assert set(result) == {"nmi", "nmi_kmeans", "num_queries", "num_excluded_queries"}


def test_kmeans_uses_all_points_and_k():
    """k = 2 with 2000 points: every point is assigned, the assignments cover k ids."""
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.normal(size=(1000, 4)), 8 + rng.normal(size=(1000, 4))])
    assignments, _ = lloyd_kmeans(x.astype(np.float32), 2)
    assert set(np.unique(assignments)) == {0, 1}
    assert len(set(assignments[:1000])) == 1 and assignments[0] != assignments[-1]
    with pytest.raises(ValueError, match="num_clusters"):
        lloyd_kmeans(x[:3], 4)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"labels": np.zeros(5)}, "one label per row"),
        ({"metrics": ("recall", "auc")}, "subset"),
        ({"backend": "annoy"}, "backend"),
        ({"recall_at": (0, 1)}, "positive integers"),
        ({"query_labels": np.zeros(3)}, "both"),
    ],
)
def test_argument_errors(kwargs, match):
    x, labels = _data(n=10)
    arguments = {"embeddings": x, "labels": labels, **kwargs}
    with pytest.raises(ValueError, match=match):
        evaluate(**arguments)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("side", ["embeddings", "query_embeddings"])
def test_non_finite_embeddings_raise_their_own_value_error(bad, side):
    # Its own class (a ValueError still), so the accuracy benchmark can record a diverged run
    # as diverged and let every other error fail the run.
    from keras_dml.evaluation import NonFiniteEmbeddingsError

    x, labels = _data(n=10)
    queries = x.copy()
    (x if side == "embeddings" else queries)[3, 0] = bad
    with pytest.raises(NonFiniteEmbeddingsError, match=f"`{side}` contains NaN or Inf"):
        evaluate(x, labels, query_embeddings=queries, query_labels=labels)
    assert issubclass(NonFiniteEmbeddingsError, ValueError)


def test_first_hit_rank_ties_and_missing_class():
    from keras_dml.evaluation.retrieval_metrics import class_index, first_hit_ranks

    reference_labels = np.array([5, 7, 5, 7, 9])
    block = np.array(
        [
            [-np.inf, 0.8, 0.8, 0.8, 0.1],  # best match (2) tied with 1 and 3: 1 before it
            [0.3, -np.inf, 0.3, 0.3, 0.3],  # match 3 tied with 0 and 2 (lower index): rank 2
            [0.2, 0.5, -np.inf, 0.4, 0.9],  # match 0 below everything: rank 3
        ],
        np.float32,
    )
    ranks = first_hit_ranks(block, 0, reference_labels[:3], class_index(reference_labels), True)
    assert ranks.tolist() == [1, 2, 3]
    missing = first_hit_ranks(block[:1], 0, np.array([42]), class_index(reference_labels), False)
    assert missing[0] == np.iinfo(np.int64).max


@pytest.mark.parametrize("k", [1, 11, 40, 300, 2000])
def test_topk_from_block_matches_stable_sort_with_ties(k):
    """Every top-k path (grouped maxima; partition + sort for k > 256, with its exact fallback for
    rows tied at the k-th value) orders by similarity, then index, ties included."""
    from keras_dml.evaluation.neighbors import topk_from_block

    rng = np.random.default_rng(k)
    block = rng.integers(0, 50, size=(6, 9000)).astype(np.float32)  # heavy ties
    block[1] = rng.normal(size=9000)
    block[2, 8990:] = 100.0  # the best values in the tail columns
    # A block is also a view into a wider buffer (the search's reused block): not contiguous.
    buffer = np.full((6, 9100), 1000.0, np.float32)
    buffer[:, :9000] = block
    for candidate in (block, buffer[:, :9000]):
        indices, sims = topk_from_block(candidate, k)
        for row in range(6):
            expected = sorted(range(9000), key=lambda j: (-block[row, j], j))[:k]
            assert indices[row].tolist() == expected
            np.testing.assert_array_equal(sims[row], block[row, expected])


def test_large_classes_match_naive_with_ties():
    """Few large classes: the dense first-hit path and the k > 256 top-k path (MAP@R, R = 299)."""
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, size=(300, 3)).astype(np.float32)  # many exact ties
    labels = rng.integers(0, 2, size=300)
    x, labels = np.concatenate([x, x[:300]]), np.concatenate([labels, 1 - labels[:300]])
    expected = naive_retrieval(x, labels, recall_at=(1, 2, 5, 50), normalize=False)
    for chunk_size in (None, 37):
        result = evaluate(
            x,
            labels,
            recall_at=(1, 2, 5, 50),
            backend="numpy",
            chunk_size=chunk_size,
            normalize=False,
            metrics=("recall", "map@r", "r_precision"),
        )
        _assert_matches(result, expected)


def test_rows_sort_by_decreasing_value_then_column_across_signs_zeros_and_infinities():
    """`sorted_within_rows` (the k > 256 top-k's sort) packs each value's bits with its column:
    negative values, -0.0 = +0.0 (tied, so by column), infinities and ties keep their order."""
    from keras_dml.search.exact_topk.ordering import sorted_within_rows

    rng = np.random.default_rng(0)
    special = np.array([-0.0, 0.0, -np.inf, np.inf, -1.5, 1.5, -1e-30, 1e-30], np.float32)
    values = rng.choice(np.concatenate([special, rng.normal(size=4).astype(np.float32)]), (5, 40))
    cols = np.stack([rng.permutation(1000)[:40] for _ in range(5)])
    for offset in (0, 2**40):  # packed keys, and the lexsort past 32 column bits
        shifted = cols + offset
        got_cols, got_values = sorted_within_rows(shifted, values)
        for row in range(5):
            expected = sorted(range(40), key=lambda j: (-float(values[row, j]), shifted[row, j]))
            assert got_cols[row].tolist() == shifted[row, expected].tolist()
            np.testing.assert_array_equal(got_values[row], values[row, expected])
