"""The exact search: similarity blocks of query chunks over reference tiles, merged top-k."""

import numpy as np

from .block_topk import topk_from_block
from .merging import _merge_candidates, merge_topk
from .ordering import _nonzero_2d
from .planning import plan_blocks


def similarity_block(
    queries, references, start, chunk_size, exclude_self=False, ref_start=0, out=None
):
    """Similarities [c, t] of queries `start..start+chunk_size` to a tile of references.

    With `exclude_self` each query's own entry is -inf; `out` is reused when given.
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


def search_chunk(queries, references, start, k, chunk_size, tile_size, exclude_self=False):
    """Exact top-k `(indices, sims)` [c, k] of a chunk of queries, the references tile by tile."""
    num_refs = references.shape[0]
    best_indices = best_sims = None
    rows_count = min(chunk_size, queries.shape[0] - start)
    # One buffer for every tile: no fresh (page-faulting) allocation per block.
    buffer = np.empty((rows_count, min(tile_size, num_refs)), np.float32)
    above = np.empty(buffer.shape, bool)
    for ref_start in range(0, num_refs, tile_size):
        tile = references[ref_start : ref_start + tile_size]
        block = similarity_block(
            queries, tile, start, chunk_size, exclude_self, ref_start, out=buffer
        )
        if best_indices is not None and best_indices.shape[1] == k:
            mask = np.greater(block, best_sims[:, -1:], out=above[:, : block.shape[1]])
            rows, cols = _nonzero_2d(mask)
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
        chunk_size: int or None. Queries per block. Defaults to `None` (about 128 MB a block).
        tile_size: int or None. References per block. Defaults to `None` (tiles when N is large).
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
