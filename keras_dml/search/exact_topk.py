"""Exact top-k by inner product in NumPy: chunked, bounded memory, ties ordered by index.

This module imports nothing but NumPy, so `export/onnx_client.py` (which must run with only
onnxruntime, NumPy and Pillow) loads this very file by path and shares the algorithm with
`keras_dml.search` and `keras_dml.evaluation`.

Order: neighbours by decreasing similarity, then increasing reference index, at every position
(the k-th included), so results are deterministic and a search over shards merges to the same
answer as one search. BLAS may round the same dot product differently in different block shapes,
so "tied" means equal as computed.

Memory: one similarity block `[chunk, tile]` at a time (about 128 MB by default). When the
references are many (a block would hold fewer than `MIN_CHUNK` queries), they are tiled too and
a running top-k is kept per query, so the references are read once per `chunk` queries.

Examples:
>>> import numpy as np
>>> x = np.eye(3, dtype="float32")
>>> exact_search(x, x, 1)[0].tolist()
[[0], [1], [2]]
"""

import numpy as np

# Elements of one similarity block (128 MB float32).
BLOCK_ELEMENTS = 2**25
# Fewest queries per block before the references are tiled as well.
MIN_CHUNK = 256
# References per tile when tiling: blocks of 2,048 queries x 16,384 references measured the
# fastest float32 matmul of the block shapes tried (benchmarks/evaluation_scale.py machine).
TILE = 16384
# Above this k a row-wise partition + sort beats the candidate gathering of `_candidates`.
_LARGE_K = 256


def default_chunk_size(num_references):
    """Queries per block so that one full-row block `[chunk, N]` stays near 128 MB."""
    return max(1, BLOCK_ELEMENTS // max(1, num_references))


def plan_blocks(num_references, chunk_size=None, tile_size=None):
    """`(chunk, tile)`: queries per block and references per tile (`tile >= N`: no tiling)."""
    if tile_size is None:
        full_chunk = chunk_size or default_chunk_size(num_references)
        if full_chunk >= MIN_CHUNK or chunk_size is not None:
            return full_chunk, max(1, num_references)
        tile_size = TILE
    tile = max(1, int(tile_size))
    chunk = chunk_size or max(1, BLOCK_ELEMENTS // tile)
    return int(chunk), tile


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


def _sorted_by_row_score_index(rows, cols, values):
    """`(rows, cols, values)` sorted by row, then decreasing value, then increasing column.

    When row, 32 value bits and column fit in 64 bits, the three keys are packed into one
    uint64 (the float bits mapped to an order-preserving unsigned integer) and sorted with
    `np.sort`, which measured ~60x faster than the equivalent `np.lexsort` on 120,000 entries.
    """
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
    bits = (values + np.float32(0.0)).view(np.uint32)  # -0.0 -> +0.0: equal floats, equal keys
    increasing = np.where(bits >> 31, ~bits, bits | np.uint32(1 << 31))
    decreasing = (~increasing).astype(np.uint64)
    keys = (
        (rows.astype(np.uint64) << np.uint64(32 + col_bits))
        | (decreasing << np.uint64(col_bits))
        | cols.astype(np.uint64)
    )
    keys.sort()
    rows = (keys >> np.uint64(32 + col_bits)).astype(np.int64)
    cols = (keys & np.uint64((1 << col_bits) - 1)).astype(np.int64)
    increasing = ~((keys >> np.uint64(col_bits)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    bits = np.where(increasing >> 31, increasing & np.uint32(0x7FFFFFFF), ~increasing)
    return rows, cols, bits.view(np.float32)


def _topk_candidates(block, k):
    """Exact top-k through `_candidates` (fast for small k), ties at the k-th to lower indices."""
    rows_count = block.shape[0]
    rows, cols = _candidates(block, k)
    rows, cols, values = _sorted_by_row_score_index(rows, cols, block[rows, cols])
    position = np.arange(rows.size) - np.searchsorted(rows, np.arange(rows_count))[rows]
    keep = position < k
    indices = np.empty((rows_count, k), np.int64)
    sims = np.empty((rows_count, k), np.float32)
    indices[rows[keep], position[keep]] = cols[keep]
    sims[rows[keep], position[keep]] = values[keep]
    return indices, sims


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
    rows, cols, values = _sorted_by_row_score_index(rows, cols, block[rows, cols])
    position = np.arange(rows.size) - np.searchsorted(rows, np.arange(rows_count))[rows]
    keep = position < k
    indices = np.empty((rows_count, k), np.int64)
    sims = np.empty((rows_count, k), np.float32)
    indices[rows[keep], position[keep]] = cols[keep]
    sims[rows[keep], position[keep]] = values[keep]
    return indices, sims


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


def merge_topk(indices, sims, k):
    """Merges candidate lists [c, m] (global indices, any order) into the exact top-k [c, k].

    Used to combine the top-k of reference tiles or of index shards: if every part returned its
    own exact top-k, the merge is the exact top-k of the union, ties ordered by index.
    """
    order = np.lexsort((indices, -sims), axis=-1)[:, :k]
    return np.take_along_axis(indices, order, 1), np.take_along_axis(sims, order, 1)


def drop_self(indices, sims, query_ids):
    """Removes each query's own index from its k+1 neighbours (else the last one) -> k columns."""
    rows, width = indices.shape
    is_self = indices == query_ids[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), width - 1)
    keep = np.ones_like(is_self)
    keep[np.arange(rows), drop] = False
    return indices[keep].reshape(rows, width - 1), sims[keep].reshape(rows, width - 1)


def similarity_block(
    queries, references, start, chunk_size, exclude_self=False, ref_start=0, out=None
):
    """Similarities [c, t] of queries `start..start+chunk_size` to `references` (a tile).

    With `exclude_self`, the queries are the references and each query's own entry (global
    index `start + row`, found in this tile when `ref_start <= start + row < ref_start + t`) is
    set to -inf. `out` (float32, at least [c, t]) is reused instead of a new block.
    """
    chunk = np.asarray(queries[start : start + chunk_size], dtype=np.float32)
    tile = np.asarray(references, dtype=np.float32)
    if out is None:
        block = chunk @ tile.T
    else:
        block = np.matmul(chunk, tile.T, out=out[: chunk.shape[0], : tile.shape[0]])
    if exclude_self:
        rows = np.arange(block.shape[0])
        cols = start + rows - ref_start
        inside = (cols >= 0) & (cols < block.shape[1])
        block[rows[inside], cols[inside]] = -np.inf
    return block


def _merge_candidates(best_indices, best_sims, rows, cols, values, k):
    """Merges sparse candidates `(rows, cols, values)` into the running top-k of those rows.

    The candidates come from a later tile (higher indices) and beat the current k-th value, so
    each affected row's new top-k is the best k of its old k entries and its candidates,
    ordered by (-similarity, index).
    """
    affected = np.unique(rows)
    old_rows = np.repeat(affected, k)
    all_rows = np.concatenate([old_rows, rows])
    all_cols = np.concatenate([best_indices[affected].reshape(-1), cols])
    all_values = np.concatenate([best_sims[affected].reshape(-1), values])
    all_rows, all_cols, all_values = _sorted_by_row_score_index(all_rows, all_cols, all_values)
    first = np.searchsorted(all_rows, affected)
    position = np.arange(all_rows.size) - np.repeat(first, np.diff(np.append(first, all_rows.size)))
    keep = position < k
    best_indices[all_rows[keep], position[keep]] = all_cols[keep]
    best_sims[all_rows[keep], position[keep]] = all_values[keep]


def search_chunk(queries, references, start, k, chunk_size, tile_size, exclude_self=False):
    """Exact top-k of queries `start..start+chunk_size` over `references`, tile by tile.

    After the first tiles fill each row's top-k, a later tile contributes only its elements
    strictly above the row's current k-th similarity (an equal one has a higher index and loses
    the tie), found in one comparison pass, so the work per tile beyond the matmul is a pass
    over the block plus a small merge.

    Returns:
        `(indices, sims)`: int64 / float32 [c, k] sorted by (-similarity, index).
    """
    num_refs = references.shape[0]
    best_indices = best_sims = None
    rows_count = min(chunk_size, queries.shape[0] - start)
    # One buffer for every tile: no fresh (page-faulting) allocation per block.
    buffer = np.empty((rows_count, min(tile_size, num_refs)), np.float32)
    for ref_start in range(0, num_refs, tile_size):
        tile = references[ref_start : ref_start + tile_size]
        block = similarity_block(
            queries, tile, start, chunk_size, exclude_self, ref_start, out=buffer
        )
        if best_indices is not None and best_indices.shape[1] == k:
            rows, cols = _nonzero_2d(block > best_sims[:, -1:])
            if rows.size:
                _merge_candidates(
                    best_indices, best_sims, rows, cols + ref_start, block[rows, cols], k
                )
            continue
        indices, sims = topk_from_block(block, min(k, block.shape[1]))
        indices += ref_start
        if best_indices is None:
            best_indices, best_sims = indices, sims
        else:
            best_indices, best_sims = merge_topk(
                np.concatenate([best_indices, indices], 1), np.concatenate([best_sims, sims], 1), k
            )
    return best_indices, best_sims


def iter_search(queries, references, k, exclude_self=False, chunk_size=None, tile_size=None):
    """Yields `(start, indices, sims)` for consecutive chunks of queries (exact top-k).

    Args:
        queries: float32 array [Q, D] (a memory map works).
        references: float32 array [N, D]. The queries themselves when `exclude_self=True`.
        k: int in [1, N] ([1, N - 1] with `exclude_self`).
        exclude_self: bool. Remove query i from its own neighbours (by index).
        chunk_size: int or None. Queries per block; None keeps a block near 128 MB.
        tile_size: int or None. References per block; None tiles only when N is large.
    """
    available = references.shape[0] - (1 if exclude_self else 0)
    if not 1 <= k <= available:
        raise ValueError(
            f"`k` must be in [1, {available}] for {references.shape[0]} references. "
            f"Received: k={k}. Lower k or add more references."
        )
    chunk, tile = plan_blocks(references.shape[0], chunk_size, tile_size)
    for start in range(0, queries.shape[0], chunk):
        yield (start, *search_chunk(queries, references, start, k, chunk, tile, exclude_self))


def exact_search(queries, references, k, exclude_self=False, chunk_size=None, tile_size=None):
    """Exact top-k of every query: `(indices, sims)`, int64 / float32 [Q, k]."""
    parts = list(iter_search(queries, references, k, exclude_self, chunk_size, tile_size))
    if not parts:
        return np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
    return np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])
