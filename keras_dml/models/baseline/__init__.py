"""The single-embedding baseline: backbone, pooling, one linear layer, L2 (the reference point)."""

from keras_dml.models.baseline.method import build_baseline

__all__ = ["build_baseline"]
