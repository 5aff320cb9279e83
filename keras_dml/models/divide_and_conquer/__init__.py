"""Divide & Conquer (Sanakoyeu et al., CVPR 2019): clustered learners over one embedding."""

from keras_dml.models.divide_and_conquer.callback import DivideAndConquerCallback
from keras_dml.models.divide_and_conquer.method import (
    DivideAndConquerOptions,
    build_divide_and_conquer,
    build_divide_and_conquer_training,
)
from keras_dml.models.divide_and_conquer.model import DivideAndConquer
from keras_dml.models.division.clustering import (
    ClusteringError,
    cluster_nmi,
    cluster_sizes,
    kmeans,
    match_clusters,
    matching_permutation,
    usable_classes_per_cluster,
)

__all__ = [
    "ClusteringError",
    "DivideAndConquer",
    "DivideAndConquerCallback",
    "DivideAndConquerOptions",
    "build_divide_and_conquer",
    "build_divide_and_conquer_training",
    "cluster_nmi",
    "cluster_sizes",
    "kmeans",
    "match_clusters",
    "matching_permutation",
    "usable_classes_per_cluster",
]
