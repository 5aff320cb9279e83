"""Models: the single-embedding baseline and the ensemble methods built on it."""

from keras_dml.models.abe import ABE, MHeads
from keras_dml.models.bier import BIER
from keras_dml.models.dcml import DCML
from keras_dml.models.divide_and_conquer import DivideAndConquer, DivideAndConquerCallback
from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.hierarchical_divide_and_conquer import (
    HierarchicalDivideAndConquer,
    HierarchicalDivideAndConquerCallback,
)

__all__ = [
    "ABE",
    "BIER",
    "DCML",
    "DivideAndConquer",
    "DivideAndConquerCallback",
    "EmbeddingModel",
    "HierarchicalDivideAndConquer",
    "HierarchicalDivideAndConquerCallback",
    "MHeads",
]
