"""`ShardedIndex`: several index shards searched on one host, in one process, merged exactly."""

import os

import numpy as np

from keras_dml.search.exact_topk import drop_self, merge_topk
from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.rerank import resolve_rerank, top_k
from keras_dml.search.results import search_result


class ShardedIndex:
    """Several `EmbeddingIndex` shards searched on this host as one gallery, merged exactly.

    Args:
        shards: list of `EmbeddingIndex` objects or saved index folders.
        model: model to embed queries with, for shards loaded from folders. Defaults to `None`.

    Examples:
    >>> from keras_dml.search import EmbeddingIndex
    >>> x = np.random.default_rng(0).normal(size=(10, 4)).astype("float32")
    >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
    >>> parts = [EmbeddingIndex.from_embeddings(x[:6]), EmbeddingIndex.from_embeddings(x[6:])]
    >>> ShardedIndex(parts).search(x[7:8], k=1).indices.tolist()
    [[7]]
    """

    def __init__(self, shards, model=None):
        loaded = []
        for shard in shards:
            if isinstance(shard, (str, os.PathLike)):
                shard = EmbeddingIndex.load(shard, model=model)
            loaded.append(shard)
        if not loaded:
            raise ValueError("A ShardedIndex needs at least one shard. Received: shards=[]")
        dims = {shard.dim for shard in loaded}
        if len(dims) != 1:
            raise ValueError(
                f"All shards must hold embeddings of one size. Received dims {sorted(dims)}."
            )
        if len({shard.labels is None for shard in loaded}) != 1:
            raise ValueError("Either every shard has labels or none does.")
        self.shards = loaded
        self.dim = loaded[0].dim
        self.offsets = np.cumsum([0] + [len(shard) for shard in loaded])
        self.embedder = next((s.embedder for s in loaded if s.embedder is not None), None)
        self.normalize = loaded[0].normalize
        self.learner_slices = loaded[0].learner_slices
        self.class_names = loaded[0].class_names
        self.labels = (
            None if loaded[0].labels is None else np.concatenate([s.labels for s in loaded])
        )
        has_ids = all(s.ids is not None for s in loaded)
        self.ids = [i for s in loaded for i in s.ids] if has_ids else None

    def index_like(self, embeddings):
        """A new exact `EmbeddingIndex` over `embeddings` `[N, D]` (one index, not shards)."""
        return EmbeddingIndex.from_embeddings(embeddings, backend="exact")

    def __len__(self):
        return int(self.offsets[-1])

    @property
    def exact(self):
        return all(shard.exact for shard in self.shards)

    def embed(self, queries, batch_size=64):
        return (
            self.shards[0].embed(queries, batch_size)
            if self.embedder is None
            else (_with_embedder(self.shards[0], self.embedder).embed(queries, batch_size))
        )

    def search_embeddings(self, queries, k, learner=None, exclude_self=False, start=0):
        """Exact merge of every shard's top-k `(indices, scores)` for query vectors `[c, D]`."""
        wanted = k + 1 if exclude_self else k
        indices, scores = [], []
        for shard, offset in zip(self.shards, self.offsets[:-1]):
            part_k = min(wanted, len(shard))
            part_indices, part_scores = shard.search_embeddings(queries, part_k, learner=learner)
            indices.append(np.where(part_indices >= 0, part_indices + offset, -1))
            scores.append(part_scores)
        indices, scores = merge_topk(np.concatenate(indices, 1), np.concatenate(scores, 1), wanted)
        if exclude_self:
            indices, scores = drop_self(indices, scores, np.arange(start, start + len(queries)))
        return indices, scores

    def iter_search(self, queries, k, exclude_self=False, chunk_size=None):
        """Yields `(start, indices, scores)` over chunks of query vectors."""
        _check_k(k, len(self), exclude_self)
        chunk_size = chunk_size or 1024
        for start in range(0, queries.shape[0], chunk_size):
            chunk = np.asarray(queries[start : start + chunk_size], dtype=np.float32)
            yield (start, *self.search_embeddings(chunk, k, exclude_self=exclude_self, start=start))

    @property
    def embeddings(self):
        """The whole gallery `[N, D]`, the shards' rows in order (what re-ranking prepares on)."""
        return np.concatenate([np.asarray(shard.embeddings) for shard in self.shards])

    def search(self, queries, k=5, learner=None, batch_size=64, rerank=None):
        """Nearest items over all shards, as `EmbeddingIndex.search` (re-ranking over all rows)."""
        reranker = resolve_rerank(rerank)
        _check_k(k, len(self))
        vectors = self.embed(queries, batch_size)
        indices, scores = top_k(self, vectors, int(k), learner=learner, reranker=reranker)
        return search_result(self, indices, scores)


def _with_embedder(shard, embedder):
    if shard.embedder is None:
        shard.embedder = embedder
    return shard


def _check_k(k, count, exclude_self=False):
    available = count - (1 if exclude_self else 0)
    if not isinstance(k, (int, np.integer)) or not 1 <= k <= available:
        raise ValueError(
            f"`k` must be an integer in [1, {available}] (the shards hold {count} items). "
            f"Received: k={k!r}"
        )
