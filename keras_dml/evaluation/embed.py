"""`embed` lives in `keras_dml.serving.embed` (below evaluation and search); re-exported here."""

from keras_dml.serving.embed import embed

__all__ = ["embed"]
