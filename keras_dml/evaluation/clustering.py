"""K-means and NMI of an embedding against its class labels."""

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

from keras_dml.evaluation.kmeans import default_restarts, lloyd_kmeans


def kmeans_assignments(embeddings, num_clusters, niter=20, nredo=None, seed=0):
    """Clusters `embeddings` with k-means and returns the cluster of every row.

    Always keras-dml's NumPy k-means (`keras_dml.evaluation.kmeans.lloyd_kmeans`: seeded
    random-point initialisation, Lloyd iterations, best of `nredo` runs), whether faiss or
    scikit-learn are installed or not, so the same embeddings give the same clusters everywhere.

    Args:
        embeddings: float32 array [N, D].
        num_clusters: int. k, at most N.
        niter: int. Lloyd iterations per run. Defaults to `20`.
        nredo: int or `None`. Runs; the lowest inertia is kept. Defaults to `None`
            (`keras_dml.evaluation.kmeans.default_restarts`: up to 10 while cheap).
        seed: int. Seed of the initialisations. Defaults to `0`.

    Returns:
        int64 array [N] of cluster ids in [0, num_clusters).

    Examples:
    >>> x = np.array([[0, 0], [0, 0.1], [5, 5], [5, 5.1]], dtype="float32")
    >>> a = kmeans_assignments(x, 2)
    >>> bool(a[0] == a[1] and a[2] == a[3] and a[0] != a[2])
    True
    """
    assignments, _ = lloyd_kmeans(embeddings, num_clusters, niter=niter, nredo=nredo, seed=seed)
    return assignments


def kmeans_description(num_points, num_clusters, dim, niter=20, nredo=None, seed=0):
    """The `nmi_kmeans` string of `evaluate`: which k-means gave the NMI.

    Returns:
        str, e.g. `"keras-dml k-means (NumPy), seed 0, 20 iterations, best of 10"`.
    """
    runs = default_restarts(num_points, num_clusters, dim) if nredo is None else int(nredo)
    return f"keras-dml k-means (NumPy), seed {seed}, {niter} iterations, best of {runs}"


def nmi(embeddings, labels, niter=20, nredo=None, seed=0):
    """Normalized mutual information between k-means clusters and classes (k = #classes).

    The k-means is `kmeans_assignments` (NumPy, the same with and without faiss).

    Args:
        embeddings: float32 array [N, D].
        labels: int array [N].
        niter, nredo, seed: passed to `kmeans_assignments`.

    Returns:
        float in [0, 1]: `sklearn.metrics.normalized_mutual_info_score` (arithmetic mean).

    Examples:
    >>> x = np.array([[0, 0], [0, 0.1], [5, 5], [5, 5.1]], dtype="float32")
    >>> round(nmi(x, np.array([0, 0, 1, 1])), 3)
    1.0

    References:
        Song et al., "Deep Metric Learning via Lifted Structured Feature Embedding", CVPR 2016
        (NMI for metric learning).
    """
    labels = np.asarray(labels)
    num_classes = np.unique(labels).size
    assignments = kmeans_assignments(embeddings, num_classes, niter, nredo, seed)
    return float(normalized_mutual_info_score(labels, assignments))
