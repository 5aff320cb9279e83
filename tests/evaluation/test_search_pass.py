"""How deep the search pass of `evaluate` (and its approximation report) searches each query."""

from keras_dml.evaluation.search_pass import _search_depth


def test_search_depth_is_the_largest_k_capped_at_the_available_references():
    assert _search_depth(100, False, (1, 2, 4, 8), 5) == 8
    assert _search_depth(100, False, (1, 2), 30) == 30
    assert _search_depth(10, True, (1, 16), 0) == 9  # the query itself is not a reference
    assert _search_depth(10, False, (1, 16), 0) == 10
    assert _search_depth(100, True, (), 0) == 1  # no Recall@K, no MAP@R: one neighbour
