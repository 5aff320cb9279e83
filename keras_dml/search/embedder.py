"""`Embedder` lives in `keras_dml.serving.embedder` (below evaluation and search); re-exported."""

from keras_dml.serving.embedder import Embedder

__all__ = ["Embedder"]
