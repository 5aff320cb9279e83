"""Training methods: how a run configuration builds, compiles and feeds each model family.

Importing it registers the built-in methods; add one with `@register_method` or an entry point.
"""

from keras_dml.methods import (  # noqa: F401
    abe,
    baseline,
    bier,
    dcml,
    divide_and_conquer,
    hierarchical_divide_and_conquer,  # noqa: F401
)
from keras_dml.methods.divide_and_conquer.callback import DivideAndConquerCallback
from keras_dml.methods.hierarchical_divide_and_conquer.callback import (
    HierarchicalDivideAndConquerCallback,
)
from keras_dml.methods.registry import (
    MethodSpec,
    get_method,
    list_methods,
    register_method,
    unregister_method,
)

__all__ = [
    "DivideAndConquerCallback",
    "HierarchicalDivideAndConquerCallback",
    "MethodSpec",
    "get_method",
    "list_methods",
    "register_method",
    "unregister_method",
]
