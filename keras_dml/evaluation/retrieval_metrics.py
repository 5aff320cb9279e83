"""Recall@K (hit rate), MAP@R and R-Precision from neighbour labels, one chunk at a time."""

import numpy as np


def relevant_counts(query_labels, reference_labels, exclude_self):
    """R of every query: references sharing its label (the query itself not counted).

    Examples:
    >>> relevant_counts(np.array([0, 0, 1]), np.array([0, 0, 1]), exclude_self=True).tolist()
    [1, 1, 0]
    """
    classes, counts = np.unique(reference_labels, return_counts=True)
    position = np.clip(np.searchsorted(classes, query_labels), 0, max(classes.size - 1, 0))
    found = classes[position] == query_labels
    r = np.where(found, counts[position], 0).astype(np.int64)
    return r - 1 if exclude_self else r


def map_at_r_and_r_precision(matches, r):
    """Per-query MAP@R and R-Precision from `matches` `[c, k >= max(r)]` and `r >= 1`.

    Examples:
    >>> m = np.array([[True, False, True]])
    >>> [float(v[0]) for v in map_at_r_and_r_precision(m, np.array([2]))]
    [0.5, 0.5]

    References:
        Musgrave et al., "A Metric Learning Reality Check", ECCV 2020, Sec. 3.2.
    """
    positions = np.arange(1, matches.shape[1] + 1)
    relevant = matches & (positions[None, :] <= r[:, None])
    precision = np.cumsum(relevant, axis=1) / positions[None, :]
    map_r = (precision * relevant).sum(axis=1) / r
    r_precision = relevant.sum(axis=1) / r
    return map_r, r_precision


def class_index(reference_labels):
    """Precomputes where each class sits in the references: (classes, starts, counts, order)."""
    order = np.argsort(reference_labels, kind="stable")
    classes, starts, counts = np.unique(
        reference_labels[order], return_index=True, return_counts=True
    )
    return classes, starts, counts, order


def first_hit_ranks(block, start, chunk_labels, class_info, exclude_self):
    """0-based rank of the first same-label reference in each row of a similarity block.

    Exact under the tie rule (similarity descending, then index ascending), with no sort:
    rank = #{j : s_j > s*} + #{j < j* : s_j = s*}; the int64 maximum without a hit.

    Examples:
    >>> labels = np.array([0, 1, 0])
    >>> block = np.array([[-np.inf, 0.9, 0.5]], "float32")
    >>> first_hit_ranks(block, 0, labels[:1], class_index(labels), True).tolist()
    [1]
    """
    classes, starts, counts, order = class_info
    rows_count = block.shape[0]
    position = np.clip(np.searchsorted(classes, chunk_labels), 0, classes.size - 1)
    count = np.where(classes[position] == chunk_labels, counts[position], 0)
    if count.sum() * _DENSE_FRACTION > block.size:
        # Large classes (e.g. 4 classes of 7,000): a masked row maximum beats gathering and
        # sorting every same-label entry.
        best, best_col, has_hit = _best_same_label_dense(block, start, chunk_labels, class_info)
        return _ranks_from_best(block, best, best_col, has_hit)
    rows = np.repeat(np.arange(rows_count), count)
    offsets = np.arange(rows.size) - np.repeat(np.cumsum(count) - count, count)
    cols = order[np.repeat(starts[position], count) + offsets]
    if exclude_self:
        keep = cols != start + rows
        rows, cols = rows[keep], cols[keep]
    values = block[rows, cols]
    ordering = np.lexsort((cols, -values, rows))
    rows, cols, values = rows[ordering], cols[ordering], values[ordering]
    first = np.ones(rows.size, bool)
    first[1:] = rows[1:] != rows[:-1]
    best = np.full(rows_count, np.inf, np.float32)
    best[rows[first]] = values[first]
    best_col = np.zeros(rows_count, np.int64)
    best_col[rows[first]] = cols[first]
    return _ranks_from_best(block, best, best_col, np.isin(np.arange(rows_count), rows))


# Use the dense path when the same-label entries exceed 1/_DENSE_FRACTION of the block.
_DENSE_FRACTION = 16


def _best_same_label_dense(block, start, chunk_labels, class_info):
    """Best same-label similarity, its lowest column and whether one exists, by a masked max."""
    classes, starts, counts, order = class_info
    reference_labels = np.repeat(classes, counts)[np.argsort(order, kind="stable")]
    same = reference_labels[None, :] == np.asarray(chunk_labels)[:, None]
    masked = np.where(same, block, -np.inf)
    rows = np.arange(block.shape[0])
    best_col = masked.argmax(axis=1)  # the first (lowest) column reaching the maximum
    best = masked[rows, best_col]
    # The query's own entry is -inf in `block` (exclude_self): a hit needs a finite similarity.
    has_hit = np.isfinite(best) & same[rows, best_col]
    return best, best_col, has_hit


def _ranks_from_best(block, best, best_col, has_hit):
    """rank = #{j : s_j > s*} + #{j < j* : s_j = s*}; the int64 maximum for rows without a hit."""
    ranks = np.count_nonzero(block > best[:, None], axis=1).astype(np.int64)
    ties = np.count_nonzero(block == best[:, None], axis=1)
    for row in np.flatnonzero(ties > 1):
        ranks[row] += np.count_nonzero(block[row, : best_col[row]] == best[row])
    ranks[~has_hit] = np.iinfo(np.int64).max
    return ranks


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
