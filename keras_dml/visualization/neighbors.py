"""`nearest_neighbors`: the one place the pictures search, with `keras_dml.evaluation`'s search."""

import numpy as np

from keras_dml.evaluation.neighbors import iter_neighbors


def nearest_neighbors(queries, references, k, query_ids=None):
    """The `k` most similar references (inner product) of every query, most similar first.

    Args:
        queries: float32 array `[Q, D]`.
        references: float32 array `[N, D]`.
        k: int. Neighbours per query.
        query_ids: int array `[Q]` or `None`. Each query's position in `references`, left out
            of its own neighbours. Defaults to `None`.

    Returns:
        `(indices, similarities)`: int64 and float32 `[Q, k]`.

    Raises:
        ValueError: `k` outside `[1, N]` (`[1, N - 1]` with `query_ids`), or bad `query_ids`.
    """
    queries = np.asarray(queries, dtype=np.float32)
    references = np.asarray(references, dtype=np.float32)
    num_refs = references.shape[0]
    available = num_refs if query_ids is None else num_refs - 1
    if not 1 <= int(k) <= available:
        raise ValueError(
            f"`k` must be in [1, {available}] to search {num_refs} references"
            f"{' without the query itself' if query_ids is not None else ''}. Received: k={k}"
        )
    k = int(k)
    if query_ids is not None:
        query_ids = np.asarray(query_ids, dtype=np.int64).reshape(-1)
        if query_ids.shape[0] != queries.shape[0] or query_ids.min(initial=0) < 0:
            raise ValueError(
                f"`query_ids` needs one position in [0, {num_refs}) per query "
                f"({queries.shape[0]}). Received: query_ids={query_ids.tolist()}"
            )
        if query_ids.size and query_ids.max() >= num_refs:
            raise ValueError(
                f"`query_ids` must be positions in [0, {num_refs}). "
                f"Received: query_ids={query_ids.tolist()}"
            )
    width = k + (query_ids is not None)
    indices, sims = [], []
    for _, chunk_indices, chunk_sims in iter_neighbors(queries, references, width, backend="numpy"):
        indices.append(chunk_indices)
        sims.append(chunk_sims)
    indices, sims = np.concatenate(indices), np.concatenate(sims)
    if query_ids is None:
        return indices, sims
    # Drop each query's own position (else the last, k + 1-th, neighbour).
    is_self = indices == query_ids[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), width - 1)
    keep = np.ones(indices.shape, dtype=bool)
    keep[np.arange(len(indices)), drop] = False
    return indices[keep].reshape(-1, k), sims[keep].reshape(-1, k)
