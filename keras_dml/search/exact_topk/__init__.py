"""Exact top-k by inner product in NumPy alone: chunked, bounded memory, ties by index.

NumPy is its only import (relative imports inside), so `deployment/onnx_client.py` loads this
folder by path. Neighbours are ordered by decreasing similarity, then increasing index, at every
position; one similarity block (about 128 MB) at a time, the references tiled when many.

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
