"""Re-ranking at query time (`rerank=`), shared by `EmbeddingIndex.search`, `evaluate` and the CLI.

Methods and parameters: docs/search.md.
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
