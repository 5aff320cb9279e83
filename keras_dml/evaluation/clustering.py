"""K-means and NMI of an embedding against its class labels."""

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

from keras_dml.evaluation.neighbors import resolve_backend
from keras_dml.utils import optional_import


def kmeans_assignments(embeddings, num_clusters, backend="auto", niter=20, nredo=1, seed=0):
    """Clusters `embeddings` with k-means and returns the cluster of every row.

    faiss k-means is told not to subsample (`max_points_per_centroid` >= the number of points;
    by default faiss keeps only 256 points per centroid) and not to warn about few points per
    centroid. The fallback is scikit-learn's `KMeans` (Lloyd, k-means++ init).

    Args:
        embeddings: float32 array [N, D].
        num_clusters: int. k, at most N.
        backend: `"auto"`, `"faiss"` or `"numpy"` (scikit-learn). Defaults to `"auto"`.
        niter: int. Lloyd iterations (maximum for scikit-learn). Defaults to `20`.
        nredo: int. Restarts; the best objective is kept. Defaults to `1`.
        seed: int. Seed of the initialisation. Defaults to `0`.

    Returns:
        int64 array [N] of cluster ids in [0, num_clusters).

    Examples:
    >>> x = np.array([[0, 0], [0, 0.1], [5, 5], [5, 5.1]], dtype="float32")
    >>> a = kmeans_assignments(x, 2, backend="numpy")
    >>> bool(a[0] == a[1] and a[2] == a[3] and a[0] != a[2])
    True
    """
    embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
    n = embeddings.shape[0]
    if not 1 <= num_clusters <= n:
        raise ValueError(
            f"k-means needs 1 <= num_clusters <= number of points ({n}). "
            f"Received: num_clusters={num_clusters}"
        )
    if num_clusters == 1:
        return np.zeros((n,), np.int64)
    if resolve_backend(backend, task="kmeans") == "faiss":
        faiss = optional_import("faiss", feature="faiss k-means")
        kmeans = faiss.Kmeans(
            embeddings.shape[1],
            int(num_clusters),
            niter=int(niter),
            nredo=int(nredo),
            seed=int(seed),
            verbose=False,
            min_points_per_centroid=1,
            max_points_per_centroid=n,
        )
        kmeans.train(embeddings)
        _, assignments = kmeans.index.search(embeddings, 1)
        return assignments[:, 0].astype(np.int64)
    from sklearn.cluster import KMeans

    kmeans = KMeans(
        n_clusters=int(num_clusters), n_init=int(nredo), max_iter=int(niter), random_state=seed
    )
    return kmeans.fit_predict(embeddings).astype(np.int64)


def nmi(embeddings, labels, backend="auto", niter=20, nredo=1, seed=0):
    """Normalized mutual information between k-means clusters and classes (k = #classes).

    Args:
        embeddings: float32 array [N, D].
        labels: int array [N].
        backend, niter, nredo, seed: passed to `kmeans_assignments`.

    Returns:
        float in [0, 1]: `sklearn.metrics.normalized_mutual_info_score` (arithmetic mean).

    Examples:
    >>> x = np.array([[0, 0], [0, 0.1], [5, 5], [5, 5.1]], dtype="float32")
    >>> round(nmi(x, np.array([0, 0, 1, 1]), backend="numpy"), 3)
    1.0

    References:
        Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016
        (NMI for metric learning).
    """
    labels = np.asarray(labels)
    num_classes = np.unique(labels).size
    assignments = kmeans_assignments(embeddings, num_classes, backend, niter, nredo, seed)
    return float(normalized_mutual_info_score(labels, assignments))
