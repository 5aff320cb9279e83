"""Models: the single-embedding baseline and the ensemble methods built on it.

Importing this package registers every built-in training method (each folder's `method.py`), so
`list_methods()` / `get_method(name)` see them; register your own with `@register_method`.
"""

from keras_dml.models import baseline  # noqa: F401 (registers the "baseline" method)
from keras_dml.models.abe import ABE, MHeads
from keras_dml.models.bier import BIER
from keras_dml.models.dcml import DCML
from keras_dml.models.divide_and_conquer import DivideAndConquer, DivideAndConquerCallback
from keras_dml.models.embedding_model import EmbeddingModel
from keras_dml.models.hierarchical_divide_and_conquer import (
    HierarchicalDivideAndConquer,
    HierarchicalDivideAndConquerCallback,
)
from keras_dml.models.registry import MethodSpec, get_method, list_methods, register_method

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
    "MethodSpec",
    "get_method",
    "list_methods",
    "register_method",
]
