"""k-reciprocal re-ranking (`k_reciprocal`), bounded: each query's top candidates, sparse sets."""

import numpy as np

from keras_dml.search.rerank import k_reciprocal_sets as sets
from keras_dml.search.rerank.base import Reranker
from keras_dml.search.rerank.neighbors import gallery_neighbors, search_without_self
from keras_dml.search.rerank.registry import register_reranker


@register_reranker
class KReciprocal(Reranker):
    """k-reciprocal re-ranking with Jaccard distance, bounded to each query's top candidates.

    The final distance is `(1 - lambda) d_J + lambda (2 - 2 s)`, returned as the score
    `1 - d / 2`; docs/search.md describes the bound and the two protocols.

    Args:
        k1: int >= 1. k of the k-reciprocal sets. Defaults to `20`.
        k2: int in [1, k1 + 1]. Neighbours of the local query expansion. Defaults to `6`.
        lambda: float in [0, 1]. Weight of the original distance. Defaults to `0.3`.
        candidates: int >= 1. Gallery items re-ranked per query (at least k). Defaults to `100`.

    Examples:
    >>> from keras_dml.search import EmbeddingIndex
    >>> x = np.eye(6, dtype="float32")
    >>> index = EmbeddingIndex.from_embeddings(x)
    >>> option = {"name": "k_reciprocal", "k1": 2, "k2": 1}
    >>> index.search(x[:1], k=1, rerank=option).indices.tolist()
    [[0]]

    References:
        Zhong, Zheng, Cao and Li, "Re-ranking Person Re-identification with k-reciprocal
        Encoding", CVPR 2017, Sec. 3.
    """

    name = "k_reciprocal"
    defaults = {"k1": 20, "k2": 6, "lambda": 0.3, "candidates": 100}

    def __init__(self, **params):
        super().__init__(**params)
        if self.params["k2"] > self.params["k1"] + 1:
            raise ValueError(
                f"rerank='k_reciprocal': `k2` must be at most k1 + 1 = {self.params['k1'] + 1}. "
                f"Received: k2={self.params['k2']}"
            )

    def depth(self, k):
        return max(k, self.params["candidates"])

    def prepare(self, searcher, gallery):
        """Builds the gallery's k1 nearest lists and encodings once (chunked)."""
        k1 = self.params["k1"]
        lists, scores = gallery_neighbors(searcher, gallery, k1)
        codes = sets.gallery_encoding(gallery, lists, k1)
        return _KReciprocalSearch(searcher, gallery, lists, scores, codes, self.params)


class _KReciprocalSearch:
    """The prepared k-reciprocal re-ranking over one gallery."""

    def __init__(self, searcher, gallery, lists, scores, codes, params):
        self.searcher, self.gallery = searcher, gallery
        self.lists, self.list_scores, self.codes = lists, scores, codes
        self.k1, self.k2 = params["k1"], params["k2"]
        self.lam, self.candidates = params["lambda"], params["candidates"]

    def search(self, vectors, k, self_rows=None):
        """Re-ranked top-k `(indices, scores)` of a chunk of query vectors."""
        count = self.gallery.shape[0]
        available = count - (0 if self_rows is None else 1)
        depth = min(max(k, self.candidates), available)
        wanted = max(depth, self.k1) if self_rows is None else depth
        neighbors, scores = search_without_self(self.searcher, vectors, wanted, self_rows)
        if self_rows is None:
            own = self._query_codes(vectors, neighbors, scores)
            expanded = sets.local_expansion(own, neighbors, self.codes, self.k2)
        else:
            rows = np.asarray(self_rows)
            expanded = sets.local_expansion(self.codes[rows], self.lists[rows], self.codes, self.k2)
        candidates, similarity = neighbors[:, :depth], scores[:, :depth].astype(np.float64)
        flat = candidates.reshape(-1)
        candidate_codes = sets.local_expansion(
            self.codes[flat], self.lists[flat], self.codes, self.k2
        )
        jaccard = sets.jaccard_distance(expanded, candidate_codes, depth)
        final = (1.0 - self.lam) * jaccard + self.lam * (2.0 - 2.0 * similarity)
        order = np.lexsort((candidates, final), axis=-1)[:, :k]
        indices = np.take_along_axis(candidates, order, 1)
        best = np.take_along_axis(final, order, 1)
        return indices, (1.0 - best / 2.0).astype(np.float32)

    def _query_codes(self, vectors, neighbors, scores):
        """V of queries outside the gallery (the virtual item N)."""
        count = self.gallery.shape[0]
        h = sets.half_size(self.k1)
        members, reciprocal = sets.query_reciprocal(
            neighbors, scores, self.lists, self.list_scores, self.k1, count
        )
        own_half, own_half_reciprocal = sets.query_reciprocal(
            neighbors, scores, self.lists, self.list_scores, h, count
        )
        rows, items = sets.expanded_sets(
            members, reciprocal, own_half, own_half_reciprocal, self.lists, self.k1, count
        )
        sims = sets.pair_similarities(vectors, rows, items, self.gallery, count)
        owners = np.full(len(vectors), count, np.int64)
        return sets.encoding(rows, items, sims, owners, len(vectors), count + 1)
