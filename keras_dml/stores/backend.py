"""`StoreBackend`: a `StoreIndex`'s searches sent to its vector store, answered as gallery rows."""

import numpy as np

from keras_dml.search.exact_topk import drop_self


class StoreBackend:
    """The search backend of a `StoreIndex`: the store's top-k, its ids mapped to gallery rows.

    Args:
        index: the `StoreIndex` (its `store`, `backend_name` and row of each id).
    """

    on_gpu = False

    def __init__(self, index):
        self.index = index
        self.kind = index.backend_name
        self.exact = index.exact

    def search(self, queries, k, exclude_self=False, start=0):
        """Top-k `(indices, scores)` `[c, k]` (`exclude_self`: the queries are rows `start..`)."""
        wanted = k + 1 if exclude_self else k
        ids, scores = self.index.store.search(queries, wanted, self.kind)
        rows = self.index.rows
        indices = np.array([[rows.get(i, -1) for i in line] for line in ids], np.int64)
        indices = indices.reshape(len(queries), wanted)
        if exclude_self:
            return drop_self(indices, scores, np.arange(start, start + len(queries)))
        return indices, scores
