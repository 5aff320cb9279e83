"""Exact NumPy backend: chunked (and, for large galleries, tiled) inner-product search."""

import numpy as np

from keras_dml.search.exact_topk import plan_blocks, search_chunk, similarity_block


class NumpyBackend:
    """Exact search over the gallery array itself (a memory map works): nothing to build.

    Args:
        dim: int. Embedding size.
        chunk_size: int or None. Queries per block. Defaults to `None` (about 128 MB a block).
        tile_size: int or None. References per block. Defaults to `None` (tiles large galleries).
    """

    kind = "exact"
    exact = True
    on_gpu = False

    def __init__(self, dim, chunk_size=None, tile_size=None):
        self.dim = int(dim)
        self.chunk_size, self.tile_size = chunk_size, tile_size
        self.embeddings = None

    def config(self):
        return {"chunk_size": self.chunk_size, "tile_size": self.tile_size}

    def build(self, embeddings, seed=0):
        self.embeddings = embeddings

    def plan(self):
        """`(chunk, tile)` for the current gallery (see `exact_topk.plan_blocks`)."""
        return plan_blocks(self.embeddings.shape[0], self.chunk_size, self.tile_size)

    def search(self, queries, k, exclude_self=False, start=0):
        """Exact top-k `(indices, sims)` [c, k] (`exclude_self`: the queries are rows `start..`)."""
        chunk, tile = self.plan()
        if exclude_self:
            return search_chunk(
                self.embeddings, self.embeddings, start, k, len(queries), tile, True
            )
        parts = [
            search_chunk(queries, self.embeddings, s, k, chunk, tile)
            for s in range(0, queries.shape[0], chunk)
        ]
        if not parts:
            return np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def block(self, queries, start, size, exclude_self=False, out=None):
        """Full-row similarity block [c, N] of queries `start..start+size` (own entries -inf)."""
        return similarity_block(queries, self.embeddings, start, size, exclude_self, out=out)
