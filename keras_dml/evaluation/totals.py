"""Running sums of the retrieval metrics over the chunks of the search pass."""

import numpy as np

from keras_dml.evaluation.retrieval_metrics import map_at_r_and_r_precision


class _Totals:
    """Running sums of Recall@K hits, MAP@R and R-Precision over chunks of queries."""

    def __init__(self, recall_at):
        self.hits = dict.fromkeys(recall_at, 0)
        self.map_sum = self.r_precision_sum = 0.0
        self.count = self.valid = 0

    def add(self, ranks, indices, labels, r, reference_labels):
        self.count += ranks.shape[0]
        for K in self.hits:
            self.hits[K] += int(np.count_nonzero(ranks < K))
        valid = r > 0
        self.valid += int(np.count_nonzero(valid))
        if indices is not None and valid.any():
            rows = indices[valid]
            matches = (reference_labels[np.maximum(rows, 0)] == labels[valid][:, None]) & (
                rows >= 0
            )
            map_r, r_prec = map_at_r_and_r_precision(matches, r[valid])
            self.map_sum += float(map_r.sum())
            self.r_precision_sum += float(r_prec.sum())

    def metrics(self, names):
        out = {}
        if "recall" in names:
            out.update({f"recall@{K}": hits / self.count for K, hits in self.hits.items()})
        if "map@r" in names:
            out["map@r"] = self.map_sum / self.valid if self.valid else float("nan")
        if "r_precision" in names:
            out["r_precision"] = self.r_precision_sum / self.valid if self.valid else float("nan")
        return out
