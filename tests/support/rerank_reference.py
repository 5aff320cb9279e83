"""Naive all-pairs re-ranking, written from the papers' equations, to check keras_dml.search.rerank.

Everything here builds the full similarity matrix and loops in Python: small sets only.
"""

import numpy as np


def normalise(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def ranked(scores, exclude=None):
    """Gallery rows by decreasing score, then increasing index; `exclude` left out."""
    order = np.lexsort((np.arange(scores.size), -scores))
    return [int(i) for i in order if i != exclude]


def naive_expansion(queries, gallery, top_n, alpha, self_rows=None):
    """q' = normalise(q + sum_j max(s_j, 0)^alpha g_j) over the top-n (alpha=None: weights 1)."""
    out = []
    for i, q in enumerate(queries):
        scores = gallery @ q
        rows = ranked(scores, None if self_rows is None else self_rows[i])[:top_n]
        weights = [1.0 if alpha is None else max(scores[j], 0.0) ** alpha for j in rows]
        out.append(q + sum(w * gallery[j] for w, j in zip(weights, rows)))
    return normalise(np.array(out))


def naive_search(queries, gallery, k, self_rows=None):
    indices, scores = [], []
    for i, q in enumerate(queries):
        s = gallery @ q
        rows = ranked(s, None if self_rows is None else self_rows[i])[:k]
        indices.append(rows)
        scores.append(s[rows])
    return np.array(indices), np.array(scores)


def naive_query_expansion(queries, gallery, k, top_n, alpha=None, self_rows=None):
    expanded = naive_expansion(queries, gallery, top_n, alpha, self_rows)
    return naive_search(expanded, gallery, k, self_rows)


def naive_dba(queries, gallery, k, top_n, alpha, self_rows=None):
    augmented = naive_expansion(gallery, gallery, top_n, alpha, np.arange(len(gallery)))
    return naive_search(queries, augmented, k, self_rows)


class NaiveKReciprocal:
    """Zhong et al. 2017, Eq. 6-14, all pairs: gallery sets in the gallery; a query outside it is
    item N, which enters a gallery item's neighbour list after the gallery rows it ties with."""

    def __init__(self, gallery, k1, k2, lam):
        self.g = gallery
        self.n = len(gallery)
        self.k1, self.k2, self.lam = k1, k2, lam
        self.h = int(np.around(k1 / 2.0))
        self.d = 2.0 - 2.0 * (gallery @ gallery.T).astype(np.float64)
        self.code = [self.encode(x) for x in range(self.n)]

    def nearest(self, x, k, query_d=None):
        """N(x, k): x then its k nearest others (the query N among them when `query_d` given)."""
        pairs = [(self.d[x, y], y) for y in range(self.n) if y != x]
        if query_d is not None:
            pairs.append((query_d[x], self.n))
        return [x] + [y for _, y in sorted(pairs)[:k]]

    def reciprocal(self, x, k):
        return [y for y in self.nearest(x, k) if x in self.nearest(y, k)]

    def expanded(self, r_k1, half_of):
        """Eq. 7."""
        star = set(r_k1)
        for q in r_k1:
            half = half_of(q)
            if 3 * len(set(half) & set(r_k1)) >= 2 * len(half):
                star |= set(half)
        return star

    def vector(self, star, distance):
        v = np.zeros(self.n + 1)
        for y in star:
            v[y] = np.exp(-distance(y))
        return v / v.sum()

    def encode(self, x):
        star = self.expanded(self.reciprocal(x, self.k1), lambda q: self.reciprocal(q, self.h))
        return self.vector(star, lambda y: 0.0 if y == x else self.d[x, y])

    def qe(self, own, neighbours):
        """Eq. 13 over x and its k2 - 1 nearest."""
        return (own + sum(self.code[y] for y in neighbours[: self.k2 - 1])) / self.k2

    def final(self, vp, dp, exclude=None):
        out = {}
        for g in range(self.n):
            if g == exclude:
                continue
            vg = self.qe(self.code[g], self.nearest(g, self.k2)[1:])
            overlap = np.minimum(vp, vg).sum()
            jaccard = 1.0 - overlap / np.maximum(vp, vg).sum()  # Eq. 11-12
            out[g] = (1.0 - self.lam) * jaccard + self.lam * dp[g]  # Eq. 14
        return out

    def rank_gallery_row(self, p, k):
        vp = self.qe(self.code[p], self.nearest(p, self.k2)[1:])
        return self._top(self.final(vp, self.d[p], exclude=p), k)

    def rank_query(self, q, k):
        dp = 2.0 - 2.0 * (self.g @ q).astype(np.float64)
        order = sorted(range(self.n), key=lambda y: (dp[y], y))
        n_p = [self.n] + order[: self.k1]

        def in_list_of(y, k):  # does the query enter N(y, k) in the gallery plus the query?
            return self.n in self.nearest(y, k, query_d=dp)

        r_k1 = [y for y in n_p if y == self.n or in_list_of(y, self.k1)]
        half_p = [y for y in [self.n] + order[: self.h] if y == self.n or in_list_of(y, self.h)]
        star = self.expanded(r_k1, lambda q: half_p if q == self.n else self.reciprocal(q, self.h))
        vp = self.vector(star, lambda y: 0.0 if y == self.n else dp[y])
        vp = self.qe(vp, order)
        return self._top(self.final(vp, dp), k)

    @staticmethod
    def _top(final, k):
        rows = sorted(final, key=lambda g: (final[g], g))[:k]
        return rows, np.array([1.0 - final[g] / 2.0 for g in rows])
