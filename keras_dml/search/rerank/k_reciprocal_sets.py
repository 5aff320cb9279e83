"""The sparse k-reciprocal encoding of Zhong et al. (2017), read from gallery neighbour lists.

Items are gallery rows `0..N-1`; a query outside the gallery is the virtual item `N`.
`N(x, k)` is `x` and its k nearest other items; `R(x, k) = {y in N(x, k) : x in N(y, k)}`.
"""

import numpy as np
import scipy.sparse

# Owners per step of the set construction (its arrays are owners x k1 x k1/2 x k1/2).
CHUNK = 1024


def half_size(k1):
    """`round(k1 / 2)`, the k of the expansion sets R(q, k1/2) (rounded as the authors' code)."""
    return int(np.around(k1 / 2.0))


def gallery_reciprocal(owners, lists, k):
    """`N(x, k)` of gallery rows `owners` `[b, k+1]` and which members are reciprocal."""
    members = np.concatenate([owners[:, None], lists[owners, :k]], axis=1)
    back = lists[members[:, 1:], :k]  # [b, k, k]: the members' own k nearest
    reciprocal = (back == owners[:, None, None]).any(axis=-1)
    return members, np.concatenate([np.ones((len(owners), 1), bool), reciprocal], axis=1)


def query_reciprocal(neighbors, scores, lists, list_scores, k, virtual):
    """`N(p, k)` `[b, k+1]` of queries outside the gallery and which members are reciprocal."""
    own = np.full((neighbors.shape[0], 1), virtual, np.int64)
    members = np.concatenate([own, neighbors[:, :k]], axis=1)
    if k == 0:
        return members, np.ones(members.shape, bool)
    reciprocal = scores[:, :k] > list_scores[neighbors[:, :k], k - 1]
    return members, np.concatenate([np.ones((len(members), 1), bool), reciprocal], axis=1)


def expanded_sets(members, reciprocal, own_half, own_half_reciprocal, lists, k1, virtual):
    """`R*(x, k1)` of each owner as sorted `(rows, items)` pairs, without repeats.

    `R*(x, k1) = R(x, k1) U R(q, k1/2)` for every `q in R(x, k1)` with
    `|R(x, k1) n R(q, k1/2)| >= 2/3 |R(q, k1/2)|`.
    """
    h = half_size(k1)
    rows = np.arange(members.shape[0])
    width = virtual + 1
    half, half_reciprocal = gallery_reciprocal(members[:, 1:].reshape(-1), lists, h)
    half = np.concatenate([own_half[:, None], half.reshape(len(rows), k1, h + 1)], axis=1)
    half_reciprocal = np.concatenate(
        [own_half_reciprocal[:, None], half_reciprocal.reshape(len(rows), k1, h + 1)], axis=1
    )
    r_keys = np.unique((rows[:, None] * width + members)[reciprocal])
    half_keys = rows[:, None, None] * width + half
    position = np.clip(np.searchsorted(r_keys, half_keys), 0, r_keys.size - 1)
    shared = (r_keys[position] == half_keys) & half_reciprocal
    size = half_reciprocal.sum(axis=-1)
    accepted = reciprocal & (3 * shared.sum(axis=-1) >= 2 * size)  # the paper's 2/3 rule, exactly
    added = half_keys[accepted[:, :, None] & half_reciprocal]
    keys = np.unique(np.concatenate([r_keys, added]))
    return keys // width, keys % width


def encoding(rows, items, similarities, owners, count, width):
    """The normalised encoding `V[x, g] = exp(-d(x, g)) / sum_g exp(-d(x, g))` over R*(x, k1).

    `d = 2 - 2 s` (0 for x itself); each csr row `[count, width]` sums to 1.
    """
    distance = np.where(items == owners[rows], 0.0, 2.0 - 2.0 * similarities.astype(np.float64))
    weights = np.exp(-distance)
    totals = np.bincount(rows, weights, minlength=count)
    values = weights / totals[rows]
    return scipy.sparse.csr_matrix((values, (rows, items)), shape=(count, width))


def pair_similarities(owner_vectors, rows, items, gallery, virtual):
    """`s(owner, item)` of every entry (the virtual item is the owner itself: its d is 0)."""
    out = np.zeros(rows.size, np.float32)
    real = items != virtual
    for start in range(0, rows.size, 1 << 18):
        part = slice(start, start + (1 << 18))
        r, i, m = rows[part], items[part], real[part]
        out[part][m] = np.einsum(
            "ij,ij->i", owner_vectors[r[m]], np.asarray(gallery[i[m]], dtype=np.float32)
        )
    return out


def gallery_encoding(gallery, lists, k1):
    """The encodings V of every gallery row, chunked: csr `[N, N + 1]`."""
    count = gallery.shape[0]
    h = half_size(k1)
    parts = []
    for start in range(0, count, CHUNK):
        owners = np.arange(start, min(start + CHUNK, count))
        members, reciprocal = gallery_reciprocal(owners, lists, k1)
        own_half, own_half_reciprocal = gallery_reciprocal(owners, lists, h)
        rows, items = expanded_sets(
            members, reciprocal, own_half, own_half_reciprocal, lists, k1, count
        )
        vectors = np.asarray(gallery[start : start + len(owners)], dtype=np.float32)
        sims = pair_similarities(vectors, rows, items, gallery, count)
        parts.append(encoding(rows, items, sims, owners, len(owners), count + 1))
    return scipy.sparse.vstack(parts).tocsr()


def local_expansion(own_rows, neighbor_rows, gallery_codes, k2):
    """`V_qe(x)`: the mean of V over x's own row and its k2 - 1 nearest gallery rows (csr)."""
    count = own_rows.shape[0]
    if k2 == 1:
        return own_rows
    rows = np.repeat(np.arange(count), k2 - 1)
    cols = neighbor_rows[:, : k2 - 1].reshape(-1)
    average = scipy.sparse.csr_matrix(
        (np.full(rows.size, 1.0 / k2), (rows, cols)), shape=(count, gallery_codes.shape[0])
    )
    return (own_rows / k2 + average @ gallery_codes).tocsr()


def jaccard_distance(query_codes, candidate_codes, per_query):
    """`d_J = 1 - |min(V_p, V_g)| / |max(V_p, V_g)|` of each query and its candidates.

    `candidate_codes` holds `per_query` rows per query, query-major; rows sum to 1, so
    `|max| = 2 - |min|`. Returns float64 `[c, per_query]`.
    """
    query = query_codes.tocoo()
    columns, local = np.unique(query.col, return_inverse=True)
    dense = np.zeros((query_codes.shape[0], columns.size + 1))  # the last column: not used
    dense[query.row, local] = query.data
    lookup = np.full(query_codes.shape[1], columns.size, np.int64)  # column -> dense column
    lookup[columns] = np.arange(columns.size)
    candidate = candidate_codes.tocoo()
    position = lookup[candidate.col]
    smaller = np.minimum(dense[candidate.row // per_query, position], candidate.data)
    overlap = np.bincount(candidate.row, smaller, minlength=candidate_codes.shape[0])
    return (1.0 - overlap / (2.0 - overlap)).reshape(-1, per_query)
