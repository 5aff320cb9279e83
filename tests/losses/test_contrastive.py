"""Contrastive loss against a naive per-pair loop."""

import numpy as np
import pytest

from keras_dml import losses


def _naive(labels, x, margin, similarity, weights=None, balance="joint"):
    n = len(labels)
    pos_terms, neg_terms = [], []
    for i in range(n):
        for j in range(n):
            if i == j and labels[i] == labels[j]:
                continue
            w = 1.0 if weights is None else weights[i, j]
            if similarity == "cosine":
                s = x[i] @ x[j] / (np.linalg.norm(x[i]) * np.linalg.norm(x[j]))
                value = (s - 1) ** 2 if labels[i] == labels[j] else max(0.0, s - margin)
            elif similarity == "squared_euclidean":  # ABE Eq. 10: the hinge on d^2
                d2 = np.sum((x[i] - x[j]) ** 2)
                value = d2 if labels[i] == labels[j] else max(0.0, margin - d2)
            else:
                d = np.linalg.norm(x[i] - x[j])
                value = d**2 if labels[i] == labels[j] else max(0.0, margin - d) ** 2
            (pos_terms if labels[i] == labels[j] else neg_terms).append(w * value)
    if not pos_terms or not neg_terms:
        return 0.0
    if balance == "separate":
        return np.mean(pos_terms) + np.mean(neg_terms)
    return np.mean(pos_terms + neg_terms)


@pytest.mark.parametrize(
    "similarity, margin", [("euclidean", 2.5), ("squared_euclidean", 6.0), ("cosine", 0.2)]
)
@pytest.mark.parametrize("balance", ["joint", "separate"])
@pytest.mark.parametrize("seed", [0, 1])
def test_contrastive_matches_naive_loop(similarity, margin, balance, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=8)
    x = rng.normal(size=(8, 4)).astype("float32")
    weights = rng.random((8, 8)).astype("float32")
    loss, count = losses.contrastive_loss(
        labels, x, margin, similarity, weights, balance, return_count=True
    )
    expected = _naive(labels, x, margin, similarity, weights, balance)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-4)
    assert int(count) == 8 * 8 - 8


def test_default_margins_follow_the_similarity():
    assert losses.ContrastiveLoss().margin == 1.0
    assert losses.ContrastiveLoss(similarity="cosine").margin == 0.5
    assert losses.ContrastiveLoss(similarity="squared_euclidean").margin == 1.0


def test_the_squared_distance_form_is_abes_eq_10():
    """ABE's learners and a baseline with `similarity="squared_euclidean"` train one loss."""
    from keras_dml.models.attention.objective import abe_contrastive_loss

    rng = np.random.default_rng(3)
    labels = rng.integers(0, 4, size=12)
    x = rng.normal(size=(12, 6)).astype("float32")
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    ours = losses.get({"name": "contrastive", "similarity": "squared_euclidean"})(labels, x)
    np.testing.assert_allclose(float(ours), float(abe_contrastive_loss(labels, x)), rtol=1e-6)
    hadsell = losses.contrastive_loss(labels, x, margin=1.0)  # a different loss on these pairs
    assert abs(float(hadsell) - float(ours)) > 1e-3


def test_invalid_similarity_is_rejected():
    with pytest.raises(ValueError, match="similarity"):
        losses.ContrastiveLoss(similarity="manhattan")
