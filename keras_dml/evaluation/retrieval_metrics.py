"""Retrieval metrics from neighbour labels: Recall@K (hit rate), MAP@R and R-Precision.

All functions work on one chunk of queries at a time so `evaluate` never holds the full
[num_queries, k] neighbour matrix.
"""

import numpy as np


def relevant_counts(query_labels, reference_labels, exclude_self):
    """R of every query: how many references share its label (the query itself not counted).

    Args:
        query_labels: int array [Q].
        reference_labels: int array [N].
        exclude_self: bool. The queries are the references (subtract the query itself).

    Returns:
        int64 array [Q].

    Examples:
    >>> relevant_counts(np.array([0, 0, 1]), np.array([0, 0, 1]), exclude_self=True).tolist()
    [1, 1, 0]
    """
    classes, counts = np.unique(reference_labels, return_counts=True)
    position = np.clip(np.searchsorted(classes, query_labels), 0, max(classes.size - 1, 0))
    found = classes[position] == query_labels
    r = np.where(found, counts[position], 0).astype(np.int64)
    return r - 1 if exclude_self else r


def hits_at(matches, recall_at):
    """Number of queries with at least one match among their first K neighbours, for each K.

    Args:
        matches: bool array [c, k]. `matches[i, j]`: neighbour j of query i shares its label.
        recall_at: sequence of int. The K values; a K larger than k uses all k neighbours.

    Returns:
        dict K -> int.
    """
    any_hit = matches.any(axis=1)
    first_hit = matches.argmax(axis=1)  # position of the first match (0 if there is none)
    return {K: int(np.count_nonzero(any_hit & (first_hit < K))) for K in recall_at}


def map_at_r_and_r_precision(matches, r):
    """Per-query MAP@R and R-Precision (Musgrave et al. 2020, Sec. 3.2).

    MAP@R = (1/R) sum_{i=1..R} P(i) rel(i), where rel(i) says whether neighbour i is relevant and
    P(i) is the precision among the first i neighbours;
    R-Precision = (relevant among the first R) / R.

    Args:
        matches: bool array [c, k] with k >= max(r).
        r: int array [c]. R of every query; must be >= 1.

    Returns:
        `(map_at_r, r_precision)`: two float64 arrays [c].

    Examples:
    >>> m = np.array([[True, False, True]])
    >>> [float(v[0]) for v in map_at_r_and_r_precision(m, np.array([2]))]
    [0.5, 0.5]
    """
    positions = np.arange(1, matches.shape[1] + 1)
    relevant = matches & (positions[None, :] <= r[:, None])
    precision = np.cumsum(relevant, axis=1) / positions[None, :]
    map_r = (precision * relevant).sum(axis=1) / r
    r_precision = relevant.sum(axis=1) / r
    return map_r, r_precision
