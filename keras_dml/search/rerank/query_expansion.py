"""Query expansion: average (`aqe`) and alpha-weighted (`alpha_qe`) re-searching of each query."""

from keras_dml.search.rerank.base import Reranker
from keras_dml.search.rerank.neighbors import search_without_self, weighted_expansion
from keras_dml.search.rerank.registry import register_reranker


@register_reranker
class AverageQueryExpansion(Reranker):
    """Average query expansion, `rerank="aqe"`: search again with `normalise(q + sum_j g_j)`.

    Args:
        top_n: int >= 1. Neighbours averaged into the query. Defaults to `10`.

    Examples:
    >>> import numpy as np
    >>> from keras_dml.search import EmbeddingIndex
    >>> x = np.eye(4, dtype="float32")
    >>> index = EmbeddingIndex.from_embeddings(x, labels=[0, 1, 2, 3])
    >>> index.search(x[:1], k=2, rerank={"name": "aqe", "top_n": 1}).indices.tolist()
    [[0, 1]]

    References:
        Chum, Philbin, Sivic, Isard and Zisserman, "Total Recall: Automatic Query Expansion
        with a Generative Feature Model for Object Retrieval", ICCV 2007.
    """

    name = "aqe"
    defaults = {"top_n": 10}
    alpha = 0.0

    def prepare(self, searcher, gallery):
        """Nothing to precompute: returns the object whose `search` expands and re-searches."""
        return _QueryExpansion(searcher, gallery, self.params["top_n"], self._alpha())

    def _alpha(self):
        return self.alpha


@register_reranker
class AlphaQueryExpansion(AverageQueryExpansion):
    """Alpha-weighted query expansion, `rerank="alpha_qe"`: neighbour j weighs `max(s_j, 0)**alpha`.

    Args:
        top_n: int >= 1. Neighbours in the expansion. Defaults to `10`.
        alpha: float >= 0. Weight exponent (`0` is `aqe`). Defaults to `3`.

    References:
        Radenovic, Tolias and Chum, "Fine-tuning CNN Image Retrieval with No Human Annotation",
        TPAMI 2018, Sec. 5.
    """

    name = "alpha_qe"
    defaults = {"top_n": 10, "alpha": 3.0}

    def _alpha(self):
        return self.params["alpha"]


class _QueryExpansion:
    """The prepared query expansion over one gallery."""

    def __init__(self, searcher, gallery, top_n, alpha):
        self.searcher, self.gallery, self.top_n, self.alpha = searcher, gallery, top_n, alpha

    def search(self, vectors, k, self_rows=None):
        """Re-ranked top-k `(indices, scores)`: scores are similarities to the expanded query."""
        first, scores = search_without_self(self.searcher, vectors, self.top_n, self_rows)
        expanded = weighted_expansion(vectors, self.gallery, first, scores, self.alpha)
        return search_without_self(self.searcher, expanded, k, self_rows)
