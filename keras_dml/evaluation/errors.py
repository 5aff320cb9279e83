"""Errors of `keras_dml.evaluation`."""


class NonFiniteEmbeddingsError(ValueError):
    """Embeddings to evaluate hold NaN or Inf values: the model diverged (or its input did).

    A `ValueError`, so code that catches bad input still catches it; a benchmark catches this
    class alone to record a diverged run as diverged instead of failing on it
    (`benchmarks/accuracy.py`).
    """
