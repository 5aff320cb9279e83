"""Exact top-k of each row of one similarity block, without a full sort of the row."""

import numpy as np

from .ordering import _nonzero_2d, _sorted_by_row_score_index, sorted_within_rows

# Above this k a row-wise partition + sort beats the candidate gathering of `_candidates`.
_LARGE_K = 256


def _candidates(block, k, strides=16):
    """(rows, cols) of a superset of each row's top-k (ties included), from group maxima.

    The k-th largest maximum `t` of `n // strides` interleaved column groups bounds the k-th
    value from below, so only the groups reaching `t` are gathered.
    """
    _, n = block.shape
    groups = n // strides
    if groups < max(k, 2 * strides):
        kth = np.partition(block, n - k, axis=1)[:, n - k]
        return _nonzero_2d(block >= kth[:, None])
    maxima = _group_maxima(block, strides, groups)
    tail = n - strides * groups
    if tail:
        np.maximum(maxima[:, :tail], block[:, strides * groups :], out=maxima[:, :tail])
    bound = np.partition(maxima, groups - k, axis=1)[:, groups - k]
    group_rows, group_ids = _nonzero_2d(maxima >= bound[:, None])
    # Each selected group's columns; the tail columns (past strides * groups) belong to the
    # first `tail` groups, whose maxima include them.
    cols = (group_ids[:, None] + groups * np.arange(strides)[None, :]).reshape(-1)
    rows = np.repeat(group_rows, strides)
    if tail:
        in_tail = group_ids < tail
        cols = np.concatenate([cols, strides * groups + group_ids[in_tail]])
        rows = np.concatenate([rows, group_rows[in_tail]])
    keep = _gather(block, rows, cols) >= bound[rows]
    return rows[keep], cols[keep]


def _gather(block, rows, cols):
    """`block[rows, cols]` through one flat `np.take` when the block is contiguous (faster)."""
    if block.flags.c_contiguous:
        return np.take(block.reshape(-1), rows * block.shape[1] + cols)
    return block[rows, cols]


def _group_maxima(block, strides, groups):
    """[c, groups] maxima of interleaved column groups, one reduction over a strided view."""
    view = np.lib.stride_tricks.as_strided(
        block,
        shape=(block.shape[0], strides, groups),
        strides=(block.strides[0], groups * block.strides[1], block.strides[1]),
        writeable=False,
    )
    return view.max(axis=1)


def _topk_partition(block, k):
    """Top-k by `np.argpartition`; rows with more ties at the k-th value than fit are inexact."""
    n = block.shape[1]
    part = np.argpartition(block, n - k, axis=1)[:, n - k :]
    indices, sims = sorted_within_rows(part, np.take_along_axis(block, part, 1))
    exact = np.count_nonzero(block >= sims[:, -1:], axis=1) == k
    return indices, sims, exact


def _topk_of_candidates(block, rows, cols, k):
    """Top-k `(indices, sims)` [c, k] of each row among candidates that hold its top-k."""
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


def topk_from_block(block, k):
    """Exact top-k of each row of `block` [c, n] (k <= n); ties at the k-th go to lower indices.

    Returns:
        `(indices, sims)`: int64 and float32 arrays [c, k], sorted by (-similarity, index).
    """
    if k > _LARGE_K:
        indices, sims, exact = _topk_partition(block, k)
        if not exact.all():
            rows = np.flatnonzero(~exact)
            indices[rows], sims[rows] = _topk_candidates(block[rows], k)
        return indices, sims
    return _topk_candidates(block, k)
