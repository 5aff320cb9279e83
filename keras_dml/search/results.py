"""`SearchResult`: the neighbours of a batch of queries, with the gallery's labels and ids."""

import dataclasses

import numpy as np


@dataclasses.dataclass
class SearchResult:
    """Neighbours of `Q` queries, best first: `indices`, `scores`, `labels`, `ids` `[Q, k]`.

    Missing rows (an approximate index found fewer than k) are -1, -inf, -1 and None;
    `class_names` names the labels and `matched` is set by `EmbeddingIndex.match`.
    """

    indices: np.ndarray
    scores: np.ndarray
    labels: np.ndarray | None = None
    ids: np.ndarray | None = None
    class_names: list | None = None
    matched: np.ndarray | None = None

    def label_names(self):
        """`[Q, k]` nested lists of class names (or label numbers as str when unnamed)."""
        if self.labels is None:
            return None
        names = self.class_names
        return [
            [
                "" if label < 0 else (names[label] if names and label < len(names) else str(label))
                for label in row
            ]
            for row in self.labels.tolist()
        ]


def gather(values, indices):
    """`values[indices]` with -1 rows mapped to a missing value (-1 or None)."""
    if values is None:
        return None
    missing = indices < 0
    safe = np.where(missing, 0, indices)
    out = np.asarray(values)[safe]
    if out.dtype == object:
        out[missing] = None
    else:
        out = np.where(missing, -1, out)
    return out


def search_result(gallery, indices, scores):
    """The `SearchResult` of neighbour rows `indices` and `scores` `[Q, k]` in `gallery`.

    Examples:
    >>> from types import SimpleNamespace
    >>> gallery = SimpleNamespace(labels=np.array([3, 4]), ids=["a", "b"], class_names=None)
    >>> result = search_result(gallery, np.array([[1, -1]]), np.array([[0.9, -np.inf]]))
    >>> result.labels.tolist(), result.ids.tolist()
    ([[4, -1]], [['b', None]])
    """
    ids = None if gallery.ids is None else np.asarray(gallery.ids, dtype=object)
    return SearchResult(
        indices=indices,
        scores=scores,
        labels=gather(gallery.labels, indices),
        ids=gather(ids, indices),
        class_names=gallery.class_names,
    )
