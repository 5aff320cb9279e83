"""`MilvusStore`: one collection of a Milvus database, keyed by item id (pymilvus)."""

import contextlib
import json
import logging

import numpy as np

from keras_dml.stores.identity import check_identity
from keras_dml.stores.uri import DEFAULT_COLLECTION, is_local, store_address
from keras_dml.utils import optional_import

IDENTITY = "keras_dml.model"
CALIBRATION = "keras_dml.calibration"
MAX_TEXT = 4096  # longest id, path or label kept
METRIC = "IP"  # inner product: what `EmbeddingIndex` ranks by
# keras-dml's backend names -> Milvus index type, build and search parameters.
INDEXES = {
    "flat": ("FLAT", {}, {}),
    "hnsw": ("HNSW", {"M": 32, "efConstruction": 80}, {"ef": 128}),
    "ivf": ("IVF_FLAT", {"nlist": 1024}, {"nprobe": 16}),
}
QUERY_CHUNK = 1024  # queries per search call (Milvus caps nq and top-k at 16,384)


class StoreError(ValueError):
    """A store or collection that is missing or was not made by keras-dml."""


@contextlib.contextmanager
def _quiet():
    """Silences Milvus Lite's logs of a server timestamp it does not serve (the calls succeed)."""
    loggers = [logging.getLogger(name) for name in ("pymilvus", "grpc._server")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


class MilvusStore:
    """A collection of ids (keys), vectors, labels and paths in Milvus Lite or a Milvus server.

    Args:
        uri: str. `milvus:///path/file.db` or `path/file.db` (Milvus Lite), or
            `http://host:19530` (a server or cluster).
        collection: str. Defaults to `"embeddings"`.
        token: str or None. Server credentials (`user:password` or an API key). Defaults to
            `None`.
    """

    def __init__(self, uri, collection=DEFAULT_COLLECTION, token=None):
        pymilvus = optional_import("pymilvus", feature="a Milvus vector store")
        self.uri, self.collection = str(uri), str(collection)
        self.client = pymilvus.MilvusClient(
            store_address(uri), **({"token": token} if token else {})
        )
        self._pymilvus = pymilvus
        self._loaded = False

    def __repr__(self):
        return f"the collection {self.collection!r} of {self.uri}"

    def exists(self):
        return self.client.has_collection(self.collection)

    def create(self, identity, index="flat"):
        """Creates the collection for `identity`'s embeddings (`index`: flat, hnsw or ivf)."""
        if index not in INDEXES:
            raise ValueError(f"`index` must be one of {sorted(INDEXES)}. Received: {index!r}")
        types = self._pymilvus.DataType
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", types.VARCHAR, is_primary=True, max_length=MAX_TEXT)
        schema.add_field("vector", types.FLOAT_VECTOR, dim=int(identity["dim"]))
        schema.add_field("label", types.VARCHAR, max_length=MAX_TEXT)
        schema.add_field("path", types.VARCHAR, max_length=MAX_TEXT)
        kind, build, _ = INDEXES[index]
        params = self.client.prepare_index_params()
        params.add_index(field_name="vector", index_type=kind, metric_type=METRIC, params=build)
        properties = {IDENTITY: json.dumps({**identity, "index": index})}
        with _quiet():
            self.client.create_collection(
                self.collection, schema=schema, index_params=params, properties=properties
            )

    def prepare(self, identity, index="flat"):
        """Creates the collection, or checks that it holds `identity`'s model; returns `self`."""
        if self.exists():
            check_identity(self.identity(), identity, repr(self))
        else:
            self.create(identity, index)
        return self

    def _properties(self):
        if not self.exists():
            raise StoreError(
                f"There is no collection {self.collection!r} in {self.uri}; embed images into "
                "it first (keras-dml embed MODEL --images DIR --store URI)."
            )
        return self.client.describe_collection(self.collection).get("properties", {})

    def identity(self):
        """The model identity stored with the collection, with its `index` name."""
        properties = self._properties()
        if IDENTITY not in properties:
            raise StoreError(f"{self!r} was not made by keras-dml (no model identity).")
        return json.loads(properties[IDENTITY])

    def calibration(self):
        """The match threshold saved by `save_calibration`, or None."""
        text = self._properties().get(CALIBRATION)
        return None if text is None else json.loads(text)

    def save_calibration(self, calibration):
        self.client.alter_collection_properties(
            self.collection, properties={CALIBRATION: json.dumps(calibration)}
        )

    def write(self, ids, vectors, labels, paths):
        """Writes rows keyed by `ids`: an id already there is replaced, never repeated."""
        rows = [
            {"id": str(i), "vector": v, "label": str(label), "path": str(path)}
            for i, v, label, path in zip(ids, np.asarray(vectors, np.float32), labels, paths)
        ]
        if rows:
            self.client.upsert(self.collection, rows)
        return len(rows)

    def flush(self):
        self.client.flush(self.collection)

    def count(self):
        """The number of items in the collection."""
        return int(self.client.query(self.collection, output_fields=["count(*)"])[0]["count(*)"])

    def _load(self):
        """Loads the collection for queries and searches (a reopened one is not loaded)."""
        if not self._loaded:
            self.client.load_collection(self.collection)
            self._loaded = True

    def keys(self, batch_size=10000):
        """`(ids, labels)` of every item, in the store's order."""
        self._load()
        if is_local(self.uri):  # Milvus Lite answers one query faster than an iterator's pages
            rows = self.client.query(self.collection, 'id >= ""', output_fields=["id", "label"])
            return [row["id"] for row in rows], [row["label"] for row in rows]
        ids, labels = [], []
        with _quiet():
            iterator = self.client.query_iterator(
                self.collection, batch_size=batch_size, output_fields=["id", "label"]
            )
            try:
                while batch := iterator.next():
                    ids += [row["id"] for row in batch]
                    labels += [row["label"] for row in batch]
            finally:
                iterator.close()
        return ids, labels

    def vectors(self, ids, batch_size=10000):
        """The vectors `[len(ids), D]` of the given ids, in their order."""
        self._load()
        parts = []
        for start in range(0, len(ids), batch_size):
            chunk = list(ids[start : start + batch_size])
            found = self.client.get(self.collection, ids=chunk, output_fields=["vector"])
            by_id = {row["id"]: row["vector"] for row in found}
            parts.append(np.asarray([by_id[i] for i in chunk], np.float32))
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def search(self, queries, k, index="flat"):
        """Top-k `(ids, scores)` `[Q, k]` by inner product (missing: None and -inf)."""
        self._load()
        params = {"metric_type": METRIC, "params": dict(INDEXES[index][2])}
        if "ef" in params["params"]:
            params["params"]["ef"] = max(params["params"]["ef"], k)
        ids = np.full((len(queries), k), None, dtype=object)
        scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
        for start in range(0, len(queries), QUERY_CHUNK):
            chunk = np.asarray(queries[start : start + QUERY_CHUNK], np.float32)
            hits = self.client.search(
                self.collection, data=list(chunk), limit=k, search_params=params
            )
            for row, found in enumerate(hits, start):
                for rank, hit in enumerate(found):
                    ids[row, rank], scores[row, rank] = hit["id"], hit["distance"]
        return ids, scores

    def close(self):
        self.client.close()
