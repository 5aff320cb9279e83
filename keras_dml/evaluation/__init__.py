"""Retrieval and clustering evaluation: `evaluate`, `embed`, `RetrievalEvaluation` and NMI."""

from keras_dml.evaluation.callback import RetrievalEvaluation
from keras_dml.evaluation.clustering import cluster_nmi, lloyd_kmeans, nmi
from keras_dml.evaluation.ensemble_diagnostics import (
    classifier_correlation,
    ensemble_diagnostics,
    feature_correlation,
)
from keras_dml.evaluation.errors import NonFiniteEmbeddingsError
from keras_dml.evaluation.evaluate import METRICS, evaluate
from keras_dml.evaluation.neighbors import iter_neighbors
from keras_dml.evaluation.retrieval_metrics import map_at_r_and_r_precision, relevant_counts
from keras_dml.serving.embed import embed

__all__ = [
    "METRICS",
    "NonFiniteEmbeddingsError",
    "RetrievalEvaluation",
    "classifier_correlation",
    "cluster_nmi",
    "embed",
    "ensemble_diagnostics",
    "feature_correlation",
    "evaluate",
    "iter_neighbors",
    "lloyd_kmeans",
    "map_at_r_and_r_precision",
    "nmi",
    "relevant_counts",
]
