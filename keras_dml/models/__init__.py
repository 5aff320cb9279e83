"""Model architectures: the single-embedding baseline and the ensembles built on it.

How each method trains is in `keras_dml.methods`.
"""

from keras_dml.models.abe import ABE
from keras_dml.models.bier import BIER
from keras_dml.models.dcml import DCML
from keras_dml.models.divide_and_conquer import DivideAndConquer
from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.ensemble_model import EnsembleModel
from keras_dml.models.hierarchical_divide_and_conquer import HierarchicalDivideAndConquer
from keras_dml.models.mheads import MHeads

__all__ = [
    "ABE",
    "BIER",
    "DCML",
    "DivideAndConquer",
    "EmbeddingModel",
    "EnsembleModel",
    "HierarchicalDivideAndConquer",
    "MHeads",
]
