"""`Reranker`: one re-ranking method's checked parameters; `rerank_search` runs it over queries."""

import numbers

import numpy as np

from keras_dml.utils.suggestions import did_you_mean_keys

# Queries re-ranked per step: k-reciprocal holds `chunk x candidates` sparse encodings.
CHUNKS = {"k_reciprocal": 256}
DEFAULT_CHUNK = 4096


class Reranker:
    """One re-ranking method with its parameters (subclasses set `name` and `defaults`).

    `prepare(searcher, gallery)` does the gallery-side work once; the prepared object's
    `search(vectors, k, self_rows=None)` re-ranks a chunk of queries.

    Args:
        **params: the method's parameters; unknown or invalid ones are refused in one line.
    """

    name = None
    defaults = {}
    # Parameters that must be integers >= 1 (the others are floats >= 0, `lambda` in [0, 1]).
    integers = ("top_n", "k1", "k2", "candidates")

    def __init__(self, **params):
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise ValueError(
                f"Unknown option(s) {unknown} for rerank={self.name!r}; it takes "
                f"{sorted(self.defaults)}.{did_you_mean_keys(unknown, self.defaults)}"
            )
        self.params = {**self.defaults, **params}
        for key, value in self.params.items():
            self._check(key, value)

    def _check(self, key, value):
        if key in self.integers:
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(
                    f"rerank={self.name!r}: `{key}` must be an integer >= 1. Received: {value!r}"
                )
            self.params[key] = int(value)
            return
        bad = isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0
        if bad or (key == "lambda" and value > 1):
            bound = "in [0, 1]" if key == "lambda" else ">= 0"
            raise ValueError(
                f"rerank={self.name!r}: `{key}` must be a number {bound}. Received: {value!r}"
            )
        self.params[key] = float(value)

    def get_config(self):
        """`{"name": ..., **params}`: the dict form `resolve_rerank` accepts back."""
        return {"name": self.name, **self.params}

    def depth(self, k):
        """Neighbours the first search of a query needs for a re-ranked top-`k`."""
        return k

    def check_gallery(self, count):
        """Refuses a gallery too small for the method's neighbour counts (one line, with a fix)."""
        for key in ("top_n", "k1"):
            need = self.params.get(key)
            if need is not None and need > count - 1:  # gallery-side lists leave each row out
                raise ValueError(
                    f"rerank={self.name!r}: `{key}`={need} needs a gallery of at least "
                    f"{need + 1} items (it holds {count}); lower `{key}`."
                )

    def __repr__(self):
        return f"{type(self).__name__}({self.get_config()})"


def rerank_search(reranker, prepared, vectors, k, self_rows=None):
    """Re-ranked top-k `(indices, scores)` `[Q, k]` of query `vectors`, chunk by chunk.

    `self_rows` are the queries' gallery rows (leave-one-out) or `None`.
    """
    chunk = CHUNKS.get(reranker.name, DEFAULT_CHUNK)
    parts = []
    for start in range(0, vectors.shape[0], chunk):
        rows = None if self_rows is None else np.asarray(self_rows[start : start + chunk])
        part = np.asarray(vectors[start : start + chunk], dtype=np.float32)
        parts.append(prepared.search(part, k, rows))
    if not parts:
        return np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def prepared_for(searcher, reranker):
    """`reranker.prepare` over `searcher`'s gallery, kept on the searcher until it changes."""
    reranker.check_gallery(len(searcher))
    key = (repr(reranker.get_config()), len(searcher))
    cache = searcher.__dict__.setdefault("_rerank_cache", {})
    if key not in cache:
        cache.clear()
        cache[key] = reranker.prepare(searcher, searcher.embeddings)
    return cache[key]


def top_k(searcher, vectors, k, learner=None, reranker=None):
    """`(indices, scores)` `[Q, k]` of query vectors: the plain search, or re-ranked.

    The one search behind `EmbeddingIndex.search` and `ShardedIndex.search`; `learner` picks a
    learner's embedding slice (plain search only).
    """
    if reranker is None:
        return searcher.search_embeddings(vectors, k, learner=learner)
    if learner is not None:
        raise ValueError(
            "`rerank` works on the whole embedding; pass `learner=None` or `rerank=None`."
        )
    return rerank_search(reranker, prepared_for(searcher, reranker), vectors, k)
