"""Re-ranking at query time (`keras_dml.search.rerank`) against naive all-pairs implementations."""

import numpy as np
import pytest

from keras_dml.search import EmbeddingIndex
from keras_dml.search.rerank import resolve_rerank
from tests.support.rerank_reference import (
    NaiveKReciprocal,
    naive_dba,
    naive_query_expansion,
    naive_search,
    normalise,
)


def clustered(count, dim=8, classes=6, seed=0):
    """Unit vectors around a few centres (neighbour sets overlap, as in real galleries)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(classes, dim))
    labels = rng.integers(0, classes, count)
    return normalise(centres[labels] + 0.7 * rng.normal(size=(count, dim))).astype(np.float32)


GALLERY = clustered(40)
QUERIES = clustered(5, seed=1)
SELF_ROWS = np.array([0, 7, 13, 21, 39])


def searched(spec, queries=QUERIES, k=10):
    index = EmbeddingIndex.from_embeddings(GALLERY)
    result = index.search(queries, k=k, rerank=spec)
    return result.indices, result.scores


def leave_one_out(spec, k=10):
    """The re-ranked lists of gallery rows queried against the rest, as `evaluate` runs them."""
    from keras_dml.search.rerank import rerank_search

    index = EmbeddingIndex.from_embeddings(GALLERY)
    reranker = resolve_rerank(spec)
    prepared = reranker.prepare(index, index.embeddings)
    return rerank_search(reranker, prepared, GALLERY[SELF_ROWS], k, SELF_ROWS)


@pytest.mark.parametrize(
    "spec, alpha",
    [({"name": "aqe", "top_n": 3}, None), ({"name": "alpha_qe", "top_n": 4, "alpha": 3}, 3.0)],
)
def test_query_expansion_equals_the_naive_expansion(spec, alpha):
    indices, scores = searched(spec)
    want_indices, want_scores = naive_query_expansion(QUERIES, GALLERY, 10, spec["top_n"], alpha)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "spec, alpha",
    [({"name": "aqe", "top_n": 3}, None), ({"name": "alpha_qe", "top_n": 4, "alpha": 3}, 3.0)],
)
def test_leave_one_out_expansion_leaves_the_query_out(spec, alpha):
    indices, scores = leave_one_out(spec)
    want = naive_query_expansion(
        GALLERY[SELF_ROWS], GALLERY, 10, spec["top_n"], alpha, self_rows=SELF_ROWS
    )
    assert not (indices == SELF_ROWS[:, None]).any()
    np.testing.assert_array_equal(indices, want[0])
    np.testing.assert_allclose(scores, want[1], rtol=1e-5, atol=1e-6)


def test_dba_searches_the_augmented_gallery_as_the_naive_one():
    spec = {"name": "dba", "top_n": 3, "alpha": 3}
    indices, scores = searched(spec)
    want = naive_dba(QUERIES, GALLERY, 10, 3, 3.0)
    np.testing.assert_array_equal(indices, want[0])
    np.testing.assert_allclose(scores, want[1], rtol=1e-5, atol=1e-6)
    loo_indices, loo_scores = leave_one_out(spec)
    want = naive_dba(GALLERY[SELF_ROWS], GALLERY, 10, 3, 3.0, self_rows=SELF_ROWS)
    np.testing.assert_array_equal(loo_indices, want[0])
    np.testing.assert_allclose(loo_scores, want[1], rtol=1e-5, atol=1e-6)


K_RECIPROCAL = {"name": "k_reciprocal", "k1": 8, "k2": 3, "lambda": 0.3, "candidates": 39}


def test_k_reciprocal_leave_one_out_equals_the_all_pairs_algorithm():
    naive = NaiveKReciprocal(GALLERY.astype(np.float64), 8, 3, 0.3)
    indices, scores = leave_one_out(K_RECIPROCAL, k=12)
    for row, p in enumerate(SELF_ROWS):
        want_rows, want_scores = naive.rank_gallery_row(int(p), 12)
        assert indices[row].tolist() == want_rows
        np.testing.assert_allclose(scores[row], want_scores, rtol=1e-5, atol=1e-6)


def test_k_reciprocal_query_gallery_equals_the_all_pairs_algorithm():
    naive = NaiveKReciprocal(GALLERY.astype(np.float64), 8, 3, 0.3)
    indices, scores = searched({**K_RECIPROCAL, "candidates": 40}, k=12)
    for row, query in enumerate(QUERIES):
        want_rows, want_scores = naive.rank_query(query.astype(np.float64), 12)
        assert indices[row].tolist() == want_rows
        np.testing.assert_allclose(scores[row], want_scores, rtol=1e-5, atol=1e-6)


def test_k_reciprocal_reorders_and_keeps_default_parameters_exact_on_a_small_gallery():
    """Default k1=20, k2=6: the candidates (100) cover the whole 40-item gallery, so exact."""
    naive = NaiveKReciprocal(GALLERY.astype(np.float64), 20, 6, 0.3)
    indices, _ = leave_one_out("k_reciprocal", k=12)
    plain = naive_search(GALLERY[SELF_ROWS], GALLERY, 12, SELF_ROWS)[0]
    assert (indices != plain).any()  # it does re-rank
    for row, p in enumerate(SELF_ROWS):
        assert indices[row].tolist() == naive.rank_gallery_row(int(p), 12)[0]


def test_a_query_result_does_not_depend_on_its_batch():
    spec = {**K_RECIPROCAL, "candidates": 20}
    together = searched(spec)[0]
    alone = np.concatenate([searched(spec, queries=QUERIES[i : i + 1])[0] for i in range(5)])
    np.testing.assert_array_equal(together, alone)


def test_default_search_is_unchanged_and_dba_follows_added_items():
    index = EmbeddingIndex.from_embeddings(GALLERY[:30])
    plain = index.search(QUERIES, k=10)
    want = naive_search(QUERIES, GALLERY[:30], 10)
    np.testing.assert_array_equal(plain.indices, want[0])
    np.testing.assert_array_equal(index.search(QUERIES, k=10, rerank=None).scores, plain.scores)
    spec = {"name": "dba", "top_n": 3}
    index.search(QUERIES, k=5, rerank=spec)
    index.add(GALLERY[30:])
    want = naive_dba(QUERIES, GALLERY, 10, 3, 3.0)[0]
    np.testing.assert_array_equal(index.search(QUERIES, k=10, rerank=spec).indices, want)


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "k_reciprocl",
            "Unknown rerank 'k_reciprocl'. Did you mean 'k_reciprocal'? Known rerank methods: "
            "['alpha_qe', 'aqe', 'dba', 'k_reciprocal'].",
        ),
        ({"name": "alpha_qe", "alpah": 2}, "Did you mean 'alpha'?"),
        ({"name": "aqe", "top_n": 0}, "`top_n` must be an integer >= 1. Received: 0"),
        ({"name": "k_reciprocal", "lambda": 1.5}, "`lambda` must be a number in [0, 1]"),
        ({"name": "k_reciprocal", "k1": 4, "k2": 6}, "`k2` must be at most k1 + 1 = 5"),
        (3, "`rerank` must be None, a name, a dict with 'name' or a Reranker"),
    ],
)
def test_bad_rerank_options_get_one_line_errors(spec, message):
    with pytest.raises(ValueError) as error:
        resolve_rerank(spec)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_small_gallery_and_learner_are_refused_in_one_line():
    index = EmbeddingIndex.from_embeddings(GALLERY[:8], learner_slices=[(0, 4), (4, 8)])
    with pytest.raises(ValueError, match=r"`top_n`=10 needs a gallery of at least 11 items"):
        index.search(QUERIES, k=2, rerank="aqe")
    with pytest.raises(ValueError, match="`rerank` works on the whole embedding"):
        index.search(QUERIES, k=2, learner=0, rerank={"name": "aqe", "top_n": 2})


def test_k_reciprocal_with_fewer_candidates_is_exact_when_they_cover_the_sets():
    """Tight clusters of 10 with k1=4: every set stays in the cluster, which the top 12 cover."""
    rng = np.random.default_rng(5)
    centres = normalise(rng.normal(size=(6, 16)))
    gallery = normalise(np.repeat(centres, 10, axis=0) + 0.05 * rng.normal(size=(60, 16)))
    gallery = gallery.astype(np.float32)
    index = EmbeddingIndex.from_embeddings(gallery)
    spec = {"name": "k_reciprocal", "k1": 4, "k2": 2, "candidates": 12}
    queries = gallery[::7] + np.float32(0.01)
    result = index.search(queries, k=12, rerank=spec)
    naive = NaiveKReciprocal(gallery.astype(np.float64), 4, 2, 0.3)
    for row, query in enumerate(queries):
        want_rows, want_scores = naive.rank_query(query.astype(np.float64), 12)
        assert result.indices[row].tolist() == want_rows
        np.testing.assert_allclose(result.scores[row], want_scores, rtol=1e-5, atol=1e-6)
