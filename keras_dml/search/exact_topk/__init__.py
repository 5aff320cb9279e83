"""Exact top-k by inner product in NumPy: chunked, bounded memory, ties ordered by index.

This package imports nothing but NumPy (its modules import each other relatively), so
`export/onnx_client.py` (which must run with only onnxruntime, NumPy and Pillow) loads this very
folder by path and shares the algorithm with `keras_dml.search` and `keras_dml.evaluation`.
Modules: `planning` (block sizes), `block_topk` (top-k of one block), `ordering` (row order),
`merging` (merging lists, self-exclusion), `tiled_search` (the search).

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

from .block_topk import topk_from_block
from .merging import drop_self, merge_topk
from .ordering import sort_rows
from .planning import BLOCK_ELEMENTS, MIN_CHUNK, TILE, default_chunk_size, plan_blocks
from .tiled_search import exact_search, iter_search, search_chunk, similarity_block

__all__ = [
    "BLOCK_ELEMENTS",
    "MIN_CHUNK",
    "TILE",
    "default_chunk_size",
    "drop_self",
    "exact_search",
    "iter_search",
    "merge_topk",
    "plan_blocks",
    "search_chunk",
    "similarity_block",
    "sort_rows",
    "topk_from_block",
]
