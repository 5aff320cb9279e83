"""Strength and correlation of an embedding ensemble (BIER, Tables 2 and 8; docs/evaluation.md)."""

import numpy as np

from keras_dml.evaluation.evaluate import evaluate


def _split(embeddings, learner_dims):
    embeddings = np.asarray(embeddings, dtype=np.float64)
    if embeddings.ndim != 2:
        raise ValueError(f"`embeddings` must be 2-D [N, D]. Received shape {embeddings.shape}.")
    learner_dims = [int(d) for d in learner_dims]
    if sum(learner_dims) != embeddings.shape[1] or min(learner_dims) < 1:
        raise ValueError(
            f"`learner_dims` must be positive and sum to the embedding size {embeddings.shape[1]}. "
            f"Received: learner_dims={learner_dims}"
        )
    parts = np.split(embeddings, np.cumsum(learner_dims)[:-1], axis=1)
    return [p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-12) for p in parts]


def feature_correlation(embeddings, learner_dims=None):
    """Mean absolute correlation between distinct dimensions, each learner L2-normalised.

    Examples:
    >>> x = np.random.default_rng(0).normal(size=(500, 4))
    >>> feature_correlation(x) < 0.1
    True
    """
    embeddings = np.asarray(embeddings)
    parts = _split(embeddings, learner_dims or [embeddings.shape[1]])
    features = np.concatenate(parts, axis=1)
    features = features[:, features.std(axis=0) > 1e-12]
    if features.shape[1] < 2:
        raise ValueError("feature_correlation needs at least two non-constant dimensions.")
    corr = np.corrcoef(features, rowvar=False)
    off_diagonal = ~np.eye(corr.shape[0], dtype=bool)
    return float(np.mean(np.abs(corr[off_diagonal])))


def _pair_indices(n, max_pairs, seed):
    total = n * (n - 1) // 2
    if max_pairs is None or total <= max_pairs:
        return np.triu_indices(n, k=1)
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, size=max_pairs)
    j = (i + rng.integers(1, n, size=max_pairs)) % n
    return i, j


def classifier_correlation(embeddings, learner_dims, max_pairs=1_000_000, seed=0):
    """Mean Pearson correlation of the learners' pair similarity scores (at most `max_pairs` pairs).

    Returns:
        dict with `mean` (float, `nan` for one learner) and `matrix` (`[M, M]` correlations).
    """
    parts = _split(embeddings, learner_dims)
    i, j = _pair_indices(parts[0].shape[0], max_pairs, seed)
    scores = np.stack([np.sum(p[i] * p[j], axis=1) for p in parts])
    if len(parts) == 1:
        return {"mean": float("nan"), "matrix": np.ones((1, 1))}
    matrix = np.corrcoef(scores)
    upper = np.triu_indices(len(parts), k=1)
    return {"mean": float(np.nanmean(matrix[upper])), "matrix": matrix}


def ensemble_diagnostics(embeddings, labels, learner_dims, recall_at=(1,), max_pairs=1_000_000):
    """Per-learner and ensemble Recall@K, feature correlation and classifier correlation.

    Args:
        embeddings: float array `[N, D]`: a model's output.
        labels: int array `[N]`.
        learner_dims: sequence of int. The model's `learner_dims`.
        recall_at: sequence of int. Recall@K values to report. Defaults to `(1,)`.
        max_pairs: int. Image pairs for the classifier correlation. Defaults to `1_000_000`.

    Returns:
        dict: `recall@K`, `learner_recall@K` (one per learner), `feature_correlation`,
        `classifier_correlation` and `classifier_correlation_matrix`.

    Examples:
    >>> diag = ensemble_diagnostics(model.predict(test_images), test_labels, model.learner_dims)
    >>> diag["learner_recall@1"], diag["classifier_correlation"]  # doctest: +SKIP

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4.1, Tables 2 and 8;
        Breiman, "Random Forests", 2001 (strength and correlation of an ensemble).
    """
    embeddings = np.asarray(embeddings, dtype=np.float32)
    parts = _split(embeddings, learner_dims)
    recall_at = tuple(int(k) for k in recall_at)
    ensemble = evaluate(
        embeddings, labels, recall_at=recall_at, metrics=("recall",), normalize=False
    )
    result = {f"recall@{k}": float(ensemble[f"recall@{k}"]) for k in recall_at}
    learners = [
        evaluate(p.astype(np.float32), labels, recall_at=recall_at, metrics=("recall",))
        for p in parts
    ]
    for k in recall_at:
        result[f"learner_recall@{k}"] = [float(m[f"recall@{k}"]) for m in learners]
    result["feature_correlation"] = feature_correlation(embeddings, learner_dims)
    clf = classifier_correlation(embeddings, learner_dims, max_pairs=max_pairs)
    result["classifier_correlation"] = clf["mean"]
    result["classifier_correlation_matrix"] = clf["matrix"].tolist()
    return result
