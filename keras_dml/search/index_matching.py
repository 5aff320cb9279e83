"""Threshold matching of an `EmbeddingIndex`: calibrate a similarity threshold, then match."""

import numpy as np

from keras_dml.search.calibration import select_threshold


class IndexMatching:
    """The matching methods of `EmbeddingIndex` (a mixin over its `embed`, `search` and labels)."""

    @property
    def threshold(self):
        """The calibrated match threshold (similarity), or None before `calibrate`."""
        return None if self.calibration is None else self.calibration["threshold"]

    def calibrate(self, queries=None, labels=None, pairs=None, target_precision=0.9):
        """Picks the match threshold reaching `target_precision` on labelled data.

        Pairs come from `pairs=(a, b, same)`, else from each of `queries` (with `labels`) and its
        nearest gallery item, else from every gallery item and its nearest other item.

        Args:
            queries: query inputs (as `search`) or None.
            labels: int array [Q] of the queries' labels.
            pairs: `(a, b, same)` or None.
            target_precision: float in (0, 1]. Defaults to `0.9`.

        Returns:
            dict (`select_threshold`'s), also kept in `self.calibration`.
        """
        if pairs is not None:
            first, second, same = pairs
            scores = np.sum(self.embed(first) * self.embed(second), axis=1)
        else:
            if self.labels is None:
                raise ValueError(
                    "Calibrating on queries needs a labelled gallery; add labels or pass pairs."
                )
            if queries is None:
                self._check_k(1, exclude_self=True)
                scores, neighbours = [], []
                for _, idx, sims in self.iter_search(self.embeddings, 1, exclude_self=True):
                    neighbours.append(idx[:, 0])
                    scores.append(sims[:, 0])
                scores, neighbours = np.concatenate(scores), np.concatenate(neighbours)
                labels = self.labels
            else:
                if labels is None:
                    raise ValueError("Pass the queries' `labels` (or `pairs`) to calibrate.")
                result = self.search(queries, k=1)
                scores, neighbours = result.scores[:, 0], result.indices[:, 0]
            same = self.labels[neighbours] == np.asarray(labels)
        self.calibration = select_threshold(scores, same, target_precision)
        return self.calibration

    def _require_threshold(self):
        if self.calibration is None:
            raise ValueError("No match threshold yet: call `index.calibrate(...)` first.")
        return self.calibration["threshold"]

    def is_match(self, first, second):
        """bool `[P]`: whether each pair scores at least the calibrated threshold."""
        threshold = self._require_threshold()
        return np.sum(self.embed(first) * self.embed(second), axis=1) >= threshold

    def match(self, queries, k=1):
        """`search` plus `matched` [Q]: the best neighbour reaches the calibrated threshold."""
        threshold = self._require_threshold()
        result = self.search(queries, k=k)
        result.matched = result.scores[:, 0] >= threshold
        return result
