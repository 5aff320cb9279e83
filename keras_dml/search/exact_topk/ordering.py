"""Row ordering of neighbour lists: by decreasing similarity, then increasing reference index."""

import numpy as np


def sort_rows(indices, sims):
    """Sorts each row by decreasing similarity, then increasing index."""
    order = np.argsort(-sims, axis=1, kind="stable")
    indices, sims = np.take_along_axis(indices, order, 1), np.take_along_axis(sims, order, 1)
    if sims.shape[1] > 1:
        tied = np.flatnonzero(np.any(sims[:, 1:] == sims[:, :-1], axis=1))
        if tied.size:
            order = np.lexsort((indices[tied], -sims[tied]), axis=-1)
            indices[tied] = np.take_along_axis(indices[tied], order, 1)
            sims[tied] = np.take_along_axis(sims[tied], order, 1)
    return indices, sims


def _nonzero_2d(mask):
    """`np.nonzero` of a 2-D mask through the (much faster) 1-D `np.flatnonzero`."""
    return np.divmod(np.flatnonzero(mask), mask.shape[1])


def _sorted_by_row_score_index(rows, cols, values):
    """`(rows, cols, values)` by row, decreasing value, increasing column (one uint64 sort)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    values = np.asarray(values, dtype=np.float32)
    if rows.size == 0:
        return rows, cols, values
    row_bits = max(1, int(rows.max()).bit_length())
    col_bits = max(1, int(cols.max()).bit_length())
    if row_bits + 32 + col_bits > 64 or cols.min() < 0:
        order = np.lexsort((cols, -values, rows))
        return rows[order], cols[order], values[order]
    keys = (
        (rows.astype(np.uint64) << np.uint64(32 + col_bits))
        | (_decreasing_keys(values).astype(np.uint64) << np.uint64(col_bits))
        | cols.astype(np.uint64)
    )
    keys.sort()
    rows = (keys >> np.uint64(32 + col_bits)).astype(np.int64)
    cols = (keys & np.uint64((1 << col_bits) - 1)).astype(np.int64)
    values = _values_of((keys >> np.uint64(col_bits)).astype(np.uint32))
    return rows, cols, values


def sorted_within_rows(cols, values):
    """Each row of `(cols, values)` [c, k] by decreasing value, then increasing column."""
    cols = np.asarray(cols, dtype=np.int64)
    values = np.asarray(values, dtype=np.float32)
    if cols.size == 0:
        return cols, values
    col_bits = max(1, int(cols.max()).bit_length())
    if col_bits > 32 or cols.min() < 0:
        order = np.lexsort((cols, -values), axis=-1)
        return np.take_along_axis(cols, order, 1), np.take_along_axis(values, order, 1)
    keys = (_decreasing_keys(values).astype(np.uint64) << np.uint64(col_bits)) | cols.astype(
        np.uint64
    )
    keys.sort(axis=1)
    cols = (keys & np.uint64((1 << col_bits) - 1)).astype(np.int64)
    return cols, _values_of((keys >> np.uint64(col_bits)).astype(np.uint32))


def _decreasing_keys(values):
    """uint32 keys whose increasing order is the decreasing order of float32 `values`."""
    bits = (values + np.float32(0.0)).view(np.uint32)
    increasing = np.where(bits >> 31, ~bits, bits | np.uint32(1 << 31))
    return ~increasing


def _values_of(decreasing):
    """The float32 values of `_decreasing_keys` (its inverse, up to the sign of zero)."""
    increasing = ~decreasing
    bits = np.where(increasing >> 31, increasing & np.uint32(0x7FFFFFFF), ~increasing)
    return bits.view(np.float32)
