"""Re-ranking at query time, shared by `EmbeddingIndex.search`, `evaluate` and the CLI.

`rerank=None` (the default) changes nothing. Otherwise a name or a dict with parameters:
- `"aqe"`: average query expansion (Chum et al. 2007), `top_n=10`;
- `"alpha_qe"`: alpha-weighted query expansion (Radenovic et al. 2018), `top_n=10, alpha=3`;
- `"dba"`: database-side augmentation (Arandjelovic and Zisserman 2012), `top_n=10, alpha=3`;
- `"k_reciprocal"`: k-reciprocal re-ranking (Zhong et al. 2017), `k1=20, k2=6, lambda=0.3,
  candidates=100`, bounded to each query's top candidates.

Each method is a `Reranker`: `prepare(searcher, gallery)` does the gallery-side work once
(chunked; never an `[N, N]` matrix), and the prepared object's `search(vectors, k, self_rows)`
re-ranks a chunk of queries (`self_rows`: the queries are these gallery rows, left out of their
own expansion and results by index).

Examples:
>>> import numpy as np
>>> from keras_dml.search import EmbeddingIndex
>>> x = np.eye(4, dtype="float32")
>>> index = EmbeddingIndex.from_embeddings(x, labels=[0, 1, 2, 3])
>>> index.search(x[:1], k=2, rerank={"name": "alpha_qe", "top_n": 2}).labels.tolist()
[[0, 1]]
"""

from keras_dml.search.rerank.base import Reranker, prepared_for, rerank_search, top_k
from keras_dml.search.rerank.database_augmentation import DatabaseAugmentation
from keras_dml.search.rerank.k_reciprocal import KReciprocal
from keras_dml.search.rerank.query_expansion import AlphaQueryExpansion, AverageQueryExpansion
from keras_dml.search.rerank.registry import RERANKERS, parse_rerank_options, resolve_rerank

__all__ = [
    "RERANKERS",
    "AlphaQueryExpansion",
    "AverageQueryExpansion",
    "DatabaseAugmentation",
    "KReciprocal",
    "Reranker",
    "parse_rerank_options",
    "prepared_for",
    "rerank_search",
    "top_k",
    "resolve_rerank",
]
