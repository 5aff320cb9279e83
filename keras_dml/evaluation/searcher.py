"""The search object of `evaluate`: an index by name, an index template or a filled index."""

import numpy as np

from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.sharded import ShardedIndex

INDEXES = ("exact", "flat", "ivf", "hnsw")


def _make_searcher(index, shards, references):
    """The search object over `references`: an `EmbeddingIndex` or a `ShardedIndex`."""
    if isinstance(index, (EmbeddingIndex, ShardedIndex)):
        if len(index) == 0 and isinstance(index, EmbeddingIndex):
            template = index
            index = EmbeddingIndex(backend=template.backend_name, **template.backend_options)
            return index.add(references)
        if len(index) != references.shape[0] or index.dim != references.shape[1]:
            raise ValueError(
                f"The index holds {len(index)} x {index.dim} vectors but the gallery is "
                f"{references.shape[0]} x {references.shape[1]}; build the index over the same "
                "(normalised) embeddings, or pass an empty index or a name such as index='ivf'."
            )
        return index
    if index not in INDEXES:
        raise ValueError(
            f"`index` must be one of {INDEXES} or an index object. Received: {index!r}"
        )
    if not isinstance(shards, (int, np.integer)) or not 1 <= shards <= references.shape[0]:
        raise ValueError(
            f"`shards` must be an integer in [1, {references.shape[0]}] (the gallery size). "
            f"Received: shards={shards!r}"
        )
    bounds = np.linspace(0, references.shape[0], int(shards) + 1).astype(int)
    parts = [
        EmbeddingIndex.from_embeddings(references[a:b], backend=index)
        for a, b in zip(bounds[:-1], bounds[1:])
    ]
    return parts[0] if len(parts) == 1 else ShardedIndex(parts)
