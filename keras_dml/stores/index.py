"""`StoreIndex`: `EmbeddingIndex`'s search, re-ranking, calibration and matching over a store."""

import os

import numpy as np

from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.index_matching import IndexMatching
from keras_dml.search.index_search import IndexSearch
from keras_dml.serving.embedder import Embedder
from keras_dml.stores.backend import StoreBackend
from keras_dml.stores.identity import check_identity, model_identity
from keras_dml.stores.milvus import MilvusStore
from keras_dml.stores.uri import DEFAULT_COLLECTION
from keras_dml.zoo.loading import resolve_model

KEY_TABLE = ("ids", "rows", "labels", "class_names")  # read from the store on first use


class StoreIndex(IndexSearch, IndexMatching):
    """A gallery kept in a vector store, searched with the methods of `EmbeddingIndex`.

    Rows are the items sorted by id; `ids`, `labels`, `class_names` and `rows` are read on first
    use, `embeddings` (learner slices, re-ranking, calibration, recall) on first use too.

    Args:
        store: a `MilvusStore` or a store URI (`path/file.db`, `milvus:///path/file.db`,
            `http://host:19530`).
        model: what `EmbeddingIndex` takes to embed queries, refused when it is not the store's
            model. Defaults to `None` (queries are embeddings).
        collection: str. Defaults to `"embeddings"`.

    Raises:
        ModelMismatchError: `model` is not the model the store was made with.
        StoreError: the collection does not exist or was not made by keras-dml.
    """

    normalize = False
    backend_options = {}

    def __init__(self, store, model=None, collection=DEFAULT_COLLECTION):
        self.store = store if isinstance(store, MilvusStore) else MilvusStore(store, collection)
        identity = self.store.identity()
        self.embedder = None
        if model is not None:
            self.embedder = model if isinstance(model, Embedder) else Embedder(resolve_model(model))
            name = model if isinstance(model, (str, os.PathLike)) else None
            check_identity(identity, model_identity(self.embedder, name), repr(self.store))
        slices = identity["learner_slices"] or (self.embedder and self.embedder.learner_slices)
        self.learner_slices = None if not slices else [tuple(map(int, s)) for s in slices]
        self.dim = int(identity["dim"])
        self.backend_name = identity["index"]
        self.calibration = self.store.calibration()
        self._embeddings = None

    def __getattr__(self, name):
        """Reads the key table on first use of `ids`, `rows`, `labels` or `class_names`."""
        if name not in KEY_TABLE or "_keys_read" in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self._read_keys()
        return self.__dict__[name]

    def _read_keys(self):
        ids, labels = self.store.keys()
        order = sorted(range(len(ids)), key=ids.__getitem__)
        self.ids, labels = [ids[i] for i in order], [labels[i] for i in order]
        self.rows = {key: row for row, key in enumerate(self.ids)}
        named = all(labels)  # as an image folder: labels only when every item has a class
        self.class_names = sorted(set(labels)) if named else None
        lookup = {name: i for i, name in enumerate(self.class_names or [])}
        self.labels = np.array([lookup[x] for x in labels], np.int64) if named else None
        self._keys_read = True

    def __len__(self):
        return len(self.ids)

    @property
    def embeddings(self):
        """Every vector `[N, D]` in row order, read from the store once."""
        if self._embeddings is None:
            self._embeddings = self.store.vectors(self.ids)
        return self._embeddings

    @property
    def backend(self):
        return StoreBackend(self)

    @property
    def exact(self):
        """Whether searches are exact (a `flat` store index)."""
        return self.backend_name == "flat"

    def index_like(self, embeddings):
        """An exact in-memory `EmbeddingIndex` over `embeddings` `[N, D]`."""
        return EmbeddingIndex.from_embeddings(embeddings, backend="exact")

    def save_calibration(self):
        """Keeps the threshold of `calibrate` with the store, for the next `StoreIndex`."""
        self._require_threshold()
        self.store.save_calibration(self.calibration)
