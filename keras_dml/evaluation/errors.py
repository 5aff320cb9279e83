"""Errors of `keras_dml.evaluation`."""


class NonFiniteEmbeddingsError(ValueError):
    """Embeddings to evaluate hold NaN or Inf values: the model diverged (or its input did)."""
