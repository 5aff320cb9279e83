"""Nearest-neighbour search of an `EmbeddingIndex`: query embedding, top-k, learner slices."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.search.exact_topk import drop_self, exact_search
from keras_dml.search.gallery import resolve_gallery
from keras_dml.search.rerank import resolve_rerank, top_k
from keras_dml.search.results import search_result
from keras_dml.serving.input_contract import check_embeddings


class IndexSearch:
    """The search methods of `EmbeddingIndex` (a mixin over its gallery and backend)."""

    def embed(self, queries, batch_size=64):
        """Query vectors `[Q, D]` from embeddings, images, files or a dataset (NaN refused)."""
        embeddings = resolve_gallery(queries, self.embedder, batch_size)[0]
        if embeddings.ndim != 2 or (self.dim is not None and embeddings.shape[1] != self.dim):
            raise ValueError(
                f"Query embeddings must be [Q, {self.dim}] like the gallery. Received shape "
                f"{tuple(embeddings.shape)}; embed queries with the gallery's model."
            )
        check_embeddings(embeddings, "query embeddings")
        return l2_normalize(embeddings) if self.normalize else embeddings.astype(np.float32)

    def _check_k(self, k, exclude_self=False):
        count = len(self)
        if count == 0:
            raise ValueError("The index is empty; add a gallery first with `index.add(...)`.")
        available = count - (1 if exclude_self else 0)
        if not isinstance(k, (int, np.integer)) or not 1 <= k <= available:
            raise ValueError(
                f"`k` must be an integer in [1, {available}] (the gallery holds {count} items). "
                f"Lower k or add more items. Received: k={k!r}"
            )

    def _learner_slice(self, learner):
        if not self.learner_slices:
            raise ValueError(
                "This index has no learner slices; build it from a keras-dml model or pass "
                f"`learner_slices=[(start, stop), ...]`. Received: learner={learner!r}"
            )
        if not isinstance(learner, (int, np.integer)) or not 0 <= learner < len(
            self.learner_slices
        ):
            raise ValueError(
                f"`learner` must be in [0, {len(self.learner_slices)}) (one per learner). "
                f"Received: learner={learner!r}"
            )
        return slice(*self.learner_slices[learner])

    def search_embeddings(self, queries, k, learner=None, exclude_self=False, start=0):
        """Top-k `(indices, scores)` of query vectors `[c, D]` (`exclude_self`: rows `start..`)."""
        if learner is not None:
            columns = self._learner_slice(learner)
            references = self.embeddings[:, columns]
            if exclude_self:
                indices, sims = exact_search(queries[:, columns], references, k + 1)
                return drop_self(indices, sims, np.arange(start, start + len(queries)))
            return exact_search(queries[:, columns], references, k)
        return self.backend.search(queries, k, exclude_self=exclude_self, start=start)

    def iter_search(self, queries, k, exclude_self=False, chunk_size=None):
        """Yields `(start, indices, scores)` over chunks of query vectors (bounded memory)."""
        self._check_k(k, exclude_self)
        if chunk_size is None:
            chunk_size = self.backend.plan()[0] if self.backend_name == "exact" else 8192
        for start in range(0, queries.shape[0], chunk_size):
            chunk = queries[start : start + chunk_size]
            yield (start, *self.search_embeddings(chunk, k, exclude_self=exclude_self, start=start))

    def search(self, queries, k=5, learner=None, batch_size=64, rerank=None):
        """Nearest gallery items of each query, optionally re-ranked.

        Args:
            queries: embeddings `[Q, D]`, images `[Q, H, W, C]`, image file(s), a folder or an
                `ImageDataset` (images need the index's model).
            k: int in [1, len(index)]. Defaults to `5`.
            learner: int or None. Search one learner's embedding slice. Defaults to `None`.
            batch_size: int. Images per model call. Defaults to `64`.
            rerank: `None`, a name of `keras_dml.search.rerank` or a dict with its parameters.
                Defaults to `None`.

        Returns:
            `SearchResult` with `indices`, `scores`, `labels`, `ids` (each `[Q, k]`).
        """
        reranker = resolve_rerank(rerank)
        self._check_k(k)
        vectors = self.embed(queries, batch_size)
        indices, scores = top_k(self, vectors, int(k), learner=learner, reranker=reranker)
        return search_result(self, indices, scores)

    def measure_recall(self, sample=1000, k=10, seed=0):
        """Recall@k of this index against exact search, `sample` seeded gallery items as queries."""
        self._check_k(k, exclude_self=True)
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.choice(len(self), min(int(sample), len(self)), replace=False))
        queries = np.asarray(self.embeddings[rows], dtype=np.float32)
        approx = self.backend.search(queries, k + 1)[0]
        exact = exact_search(queries, self.embeddings, k + 1)[0]
        approx = drop_self(approx, np.zeros(approx.shape, np.float32), rows)[0]
        exact = drop_self(exact, np.zeros(exact.shape, np.float32), rows)[0]
        found = [np.intersect1d(a[a >= 0], e).size for a, e in zip(approx, exact)]
        return float(np.sum(found) / exact.size)
