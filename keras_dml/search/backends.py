"""Search backend names and the factory that builds a backend object from a name."""

from keras_dml.search.faiss_backend import FaissBackend
from keras_dml.search.numpy_backend import NumpyBackend

BACKENDS = ("exact", "flat", "ivf", "hnsw")
APPROXIMATE = ("ivf", "hnsw")


def make_backend(backend, dim, options):
    """The search backend object for a backend name (`exact`, `flat`, `ivf` or `hnsw`)."""
    if backend not in BACKENDS:
        raise ValueError(
            f"`backend` must be one of {BACKENDS} (exact NumPy; faiss IndexFlatIP; faiss IVF; "
            f"faiss HNSW). Received: backend={backend!r}"
        )
    if backend == "exact":
        return NumpyBackend(dim, **options)
    return FaissBackend(backend, dim, **options)
