"""Exact top-k of each row of one similarity block, without a full sort of the row."""

import numpy as np

from .ordering import _nonzero_2d, _sorted_by_row_score_index

# Above this k a row-wise partition + sort beats the candidate gathering of `_candidates`.
_LARGE_K = 256


def _candidates(block, k, strides=64):
    """(rows, cols) of a superset of each row's top-k, found without a pass over the whole row.

    Columns are dealt into `G = n // strides` interleaved groups (group g = columns g, g + G,
    g + 2G, ...); the group maxima come from `strides` contiguous `np.maximum` calls. The k-th
    largest group maximum `t` is a lower bound of the k-th largest value (k groups each hold an
    element >= t), and every element >= t lies in a group whose maximum is >= t, so only those
    groups are gathered. Returns every element >= t: at least k per row, ties included.
    """
    _, n = block.shape
    groups = n // strides
    if groups < max(k, 2 * strides):
        kth = np.partition(block, n - k, axis=1)[:, n - k]
        return _nonzero_2d(block >= kth[:, None])
    maxima = block[:, :groups].copy()
    for i in range(1, strides):
        np.maximum(maxima, block[:, i * groups : (i + 1) * groups], out=maxima)
    tail = n - strides * groups
    if tail:
        np.maximum(maxima[:, :tail], block[:, strides * groups :], out=maxima[:, :tail])
    bound = np.partition(maxima, groups - k, axis=1)[:, groups - k]
    group_rows, group_ids = _nonzero_2d(maxima >= bound[:, None])
    cols = group_ids[:, None] + groups * np.arange(strides + 1)[None, :]
    valid = cols < n
    cols = np.where(valid, cols, 0)
    rows = np.broadcast_to(group_rows[:, None], cols.shape)
    keep = valid & (block[rows, cols] >= bound[group_rows][:, None])
    return rows[keep], cols[keep]


def _topk_partition(block, k):
    """Top-k by `np.argpartition` and a per-row stable sort, with a per-row exactness flag.

    Rows where more references tie at the k-th value than fit are marked inexact (the partition
    may have kept the wrong ones among the tied).
    """
    part = np.argpartition(-block, k - 1, axis=1)[:, :k]
    part.sort(axis=1)  # ascending index, so the stable sort below breaks ties by index
    values = np.take_along_axis(block, part, 1)
    order = np.argsort(-values, axis=1, kind="stable")
    indices = np.take_along_axis(part, order, 1).astype(np.int64)
    sims = np.take_along_axis(values, order, 1).astype(np.float32)
    exact = np.count_nonzero(block >= sims[:, -1:], axis=1) == k
    return indices, sims, exact


def _topk_of_candidates(block, rows, cols, k):
    """Top-k `(indices, sims)` [c, k] of each row of `block` among the candidates `(rows, cols)`.

    Every row's candidates must include its top-k (ties at the k-th value included): they are
    sorted by row, decreasing value, increasing column, and the first k of each row are kept.
    """
    rows_count = block.shape[0]
    rows, cols, values = _sorted_by_row_score_index(rows, cols, block[rows, cols])
    position = np.arange(rows.size) - np.searchsorted(rows, np.arange(rows_count))[rows]
    keep = position < k
    indices = np.empty((rows_count, k), np.int64)
    sims = np.empty((rows_count, k), np.float32)
    indices[rows[keep], position[keep]] = cols[keep]
    sims[rows[keep], position[keep]] = values[keep]
    return indices, sims


def _topk_candidates(block, k):
    """Exact top-k through `_candidates` (fast for small k), ties at the k-th to lower indices."""
    rows, cols = _candidates(block, k)
    return _topk_of_candidates(block, rows, cols, k)


def _topk_sampled_threshold(block, k, sample=1024, budget=16):
    """Exact top-k through a threshold from a column sample, or None when it selects too much.

    The k-th largest value among the first `sample` columns of a row is at most the row's k-th
    largest, so every top-k element is >= it; one comparison pass then selects about
    `k * n / sample` candidates per row, which are sorted. Returns None when the candidates
    exceed `budget * k * n / sample` per row on average (data ordered so that the first
    columns are unusually low), for the caller's other path.
    """
    rows_count, n = block.shape
    sample = min(n, max(sample, 4 * k))
    if sample >= n // 2:
        return None
    bound = np.partition(block[:, :sample], sample - k, axis=1)[:, sample - k]
    mask = block >= bound[:, None]
    if np.count_nonzero(mask) > budget * k * rows_count * (n / sample):
        return None
    rows, cols = _nonzero_2d(mask)
    return _topk_of_candidates(block, rows, cols, k)


def topk_from_block(block, k):
    """Exact top-k of each row of `block` [c, n] (k <= n); ties at the k-th go to lower indices.

    Returns:
        `(indices, sims)`: int64 and float32 arrays [c, k], sorted by (-similarity, index).
    """
    if k <= _LARGE_K:
        sampled = _topk_sampled_threshold(block, k)
        if sampled is not None:
            return sampled
    if k > _LARGE_K:
        indices, sims, exact = _topk_partition(block, k)
        if not exact.all():
            rows = np.flatnonzero(~exact)
            indices[rows], sims[rows] = _topk_candidates(block[rows], k)
        return indices, sims
    return _topk_candidates(block, k)
