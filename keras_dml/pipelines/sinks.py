"""Where embedded rows go: a vector store (upserts keyed by id) or Parquet shards."""

import os

import numpy as np

from keras_dml.pipelines.beam_api import DoFn, require_beam
from keras_dml.pipelines.progress import counter
from keras_dml.stores.milvus import MilvusStore


def to_row(keyed):
    """`{"id", "path", "label", "vector"}` of a `((id, path, label), PredictionResult)` pair."""
    (key, path, label), result = keyed
    return {"id": key, "path": path, "label": label, "vector": np.asarray(result.inference)}


class WriteToStore(DoFn):
    """Writes rows to a store collection in batches of upserts: a rerun adds no duplicates.

    Args:
        uri: str. The store (as `MilvusStore`).
        collection: str. The collection, made beforehand by `MilvusStore.prepare`.
        batch_size: int. Rows per upsert. Defaults to `1000`.
    """

    def __init__(self, uri, collection, batch_size=1000):
        self.uri, self.collection, self.batch_size = uri, collection, int(batch_size)

    def setup(self):
        self.store = MilvusStore(self.uri, self.collection)
        self.written = counter("written")
        self.rows = []

    def process(self, row):
        self.rows.append(row)
        if len(self.rows) >= self.batch_size:
            self._write()

    def finish_bundle(self):
        if self._write():
            self.store.flush()

    def _write(self):
        if self.rows:
            columns = [[row[name] for row in self.rows] for name in ("id", "vector", "label")]
            paths = [row["path"] for row in self.rows]
            self.written.inc(self.store.write(*columns, paths))
            self.rows = []
            return True
        return False

    def teardown(self):
        self.store.close()


def write_parquet(rows, output):
    """Writes rows as Parquet shards `OUTPUT/embeddings-SSSSS-of-NNNNN.parquet`."""
    beam = require_beam()
    import pyarrow  # a dependency of apache-beam

    schema = pyarrow.schema(
        [
            ("id", pyarrow.string()),
            ("path", pyarrow.string()),
            ("label", pyarrow.string()),
            ("vector", pyarrow.list_(pyarrow.float32())),
        ]
    )
    return (
        rows
        | "ParquetRow" >> beam.Map(lambda row: {**row, "vector": row["vector"].tolist()})
        | "WriteParquet"
        >> beam.io.WriteToParquet(
            os.path.join(output, "embeddings"), schema, file_name_suffix=".parquet"
        )
    )
