"""Search a gallery with a trained model: `EmbeddingIndex`, `ShardedIndex`, threshold matching."""

from keras_dml.search.calibration import select_threshold
from keras_dml.search.errors import IndexFormatError
from keras_dml.search.index import BACKENDS, EmbeddingIndex
from keras_dml.search.results import SearchResult
from keras_dml.search.sharded import ShardedIndex
from keras_dml.search.storage import load_index
from keras_dml.serving.embedder import Embedder

__all__ = [
    "BACKENDS",
    "Embedder",
    "EmbeddingIndex",
    "IndexFormatError",
    "SearchResult",
    "ShardedIndex",
    "load_index",
    "select_threshold",
]
