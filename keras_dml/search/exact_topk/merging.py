"""Merging of neighbour lists: tiles or shards into one top-k, and self-exclusion."""

import numpy as np

from .ordering import _sorted_by_row_score_index


def merge_topk(indices, sims, k):
    """Merges candidate lists [c, m] (global indices) into the exact top-k [c, k] of their union."""
    order = np.lexsort((indices, -sims), axis=-1)[:, :k]
    return np.take_along_axis(indices, order, 1), np.take_along_axis(sims, order, 1)


def drop_self(indices, sims, query_ids):
    """Removes each query's own index from its k+1 neighbours (else the last one) -> k columns."""
    rows, width = indices.shape
    is_self = indices == query_ids[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), width - 1)
    keep = np.ones_like(is_self)
    keep[np.arange(rows), drop] = False
    return indices[keep].reshape(rows, width - 1), sims[keep].reshape(rows, width - 1)


def _merge_candidates(best_indices, best_sims, rows, cols, values, k):
    """Merges a later tile's sparse candidates `(rows, cols, values)` into the running top-k."""
    affected = np.unique(rows)
    old_rows = np.repeat(affected, k)
    all_rows = np.concatenate([old_rows, rows])
    all_cols = np.concatenate([best_indices[affected].reshape(-1), cols])
    all_values = np.concatenate([best_sims[affected].reshape(-1), values])
    all_rows, all_cols, all_values = _sorted_by_row_score_index(all_rows, all_cols, all_values)
    first = np.searchsorted(all_rows, affected)
    position = np.arange(all_rows.size) - np.repeat(first, np.diff(np.append(first, all_rows.size)))
    keep = position < k
    best_indices[all_rows[keep], position[keep]] = all_cols[keep]
    best_sims[all_rows[keep], position[keep]] = all_values[keep]
