"""Hierarchical Divide & Conquer (Sanakoyeu et al., TPAMI 2021): soft masks, progressive splits."""

from keras_dml.models.hierarchical_divide_and_conquer.callback import (
    HierarchicalDivideAndConquerCallback,
)
from keras_dml.models.hierarchical_divide_and_conquer.division import recluster, split_clusters
from keras_dml.models.hierarchical_divide_and_conquer.method import (
    HierarchicalDivideAndConquerOptions,
    build_hierarchical_divide_and_conquer,
)
from keras_dml.models.hierarchical_divide_and_conquer.model import HierarchicalDivideAndConquer
from keras_dml.models.hierarchical_divide_and_conquer.presets import (
    PRESETS,
    get_preset,
    list_presets,
    preset_config,
)

__all__ = [
    "PRESETS",
    "HierarchicalDivideAndConquer",
    "HierarchicalDivideAndConquerCallback",
    "HierarchicalDivideAndConquerOptions",
    "build_hierarchical_divide_and_conquer",
    "get_preset",
    "list_presets",
    "preset_config",
    "recluster",
    "split_clusters",
]
