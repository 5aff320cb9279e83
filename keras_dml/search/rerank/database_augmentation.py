"""Database-side augmentation (`dba`): every gallery vector averaged with its gallery neighbours."""

import numpy as np

from keras_dml.search.rerank.base import Reranker
from keras_dml.search.rerank.neighbors import (
    gallery_neighbors,
    search_without_self,
    weighted_expansion,
)
from keras_dml.search.rerank.registry import register_reranker


@register_reranker
class DatabaseAugmentation(Reranker):
    """Database-side augmentation, `rerank="dba"`: each gallery vector averaged with its neighbours.

    Each gallery vector `g` becomes `normalise(g + sum_j max(s_j, 0) ** alpha g_j)` over its
    top-n other gallery rows, and the unchanged queries search that gallery.

    Args:
        top_n: int >= 1. Gallery neighbours averaged into each gallery vector. Defaults to `10`.
        alpha: float >= 0. Weight exponent (`0`: the plain average). Defaults to `3`.

    Examples:
    >>> from keras_dml.search import EmbeddingIndex
    >>> x = np.eye(4, dtype="float32")
    >>> index = EmbeddingIndex.from_embeddings(x, labels=[0, 1, 2, 3])
    >>> index.search(x[:1], k=1, rerank={"name": "dba", "top_n": 1}).indices.tolist()
    [[0]]

    References:
        Arandjelovic and Zisserman, "Three things everyone should know to improve object
        retrieval", CVPR 2012 (database-side augmentation); Radenovic, Tolias and Chum,
        "Fine-tuning CNN Image Retrieval with No Human Annotation", TPAMI 2018, Sec. 5 (the
        alpha weights).
    """

    name = "dba"
    defaults = {"top_n": 10, "alpha": 3.0}

    def prepare(self, searcher, gallery):
        """Augments the gallery (chunked) and indexes it like `searcher` (`index_like`)."""
        augmented = augment_gallery(searcher, gallery, self.params["top_n"], self.params["alpha"])
        return _AugmentedSearch(searcher.index_like(augmented))


def augment_gallery(searcher, gallery, top_n, alpha):
    """The augmented gallery `[N, D]` float32, chunk by chunk (see `DatabaseAugmentation`)."""
    neighbors, scores = gallery_neighbors(searcher, gallery, top_n)
    augmented = np.empty(gallery.shape, np.float32)
    for start in range(0, gallery.shape[0], 4096):
        stop = min(start + 4096, gallery.shape[0])
        rows = np.asarray(gallery[start:stop], dtype=np.float32)
        augmented[start:stop] = weighted_expansion(
            rows, gallery, neighbors[start:stop], scores[start:stop], alpha
        )
    return augmented


class _AugmentedSearch:
    def __init__(self, index):
        self.index = index

    def search(self, vectors, k, self_rows=None):
        """Top-k of the unchanged queries in the augmented gallery (scores: similarities to it)."""
        return search_without_self(self.index, vectors, k, self_rows)
