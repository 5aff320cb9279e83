"""Distances, masks and pair reductions shared by the losses, against naive loops."""

import keras
import numpy as np
import pytest

from keras_dml import pairs
from tests.support.backend_utils import dtype_name, gradients, to_numpy, value_and_gradients


def _data(seed=0, n=7, dim=5):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, size=n).astype("int32"), rng.normal(size=(n, dim)).astype("float32")


def test_pairwise_distances_match_loop():
    _, x = _data()
    expected = np.array([[np.linalg.norm(a - b) for b in x] for a in x])
    np.testing.assert_allclose(to_numpy(pairs.pairwise_distances(x)), expected, atol=1e-5)
    np.testing.assert_allclose(
        to_numpy(pairs.pairwise_distances(x, squared=True)), expected**2, atol=1e-4
    )
    assert np.all(np.diag(to_numpy(pairs.pairwise_distances(x))) == 0.0)


def test_distance_gradient_is_finite_for_identical_embeddings():
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]], "float32")
    (gradient,) = gradients(lambda x: keras.ops.sum(pairs.pairwise_distances(x)), [x])
    assert np.all(np.isfinite(gradient))
    # Only the pairs with the third point contribute: unit vectors from it, twice (symmetry).
    direction = np.array([1.0, 1.0]) / np.sqrt(2.0)
    np.testing.assert_allclose(gradient[0], 2 * direction, atol=1e-5)


def test_safe_sqrt_value_and_gradient_at_zero():
    x = np.array([0.0, 4.0], "float32")
    np.testing.assert_allclose(to_numpy(pairs.safe_sqrt(x)), [0.0, 2.0])
    (gradient,) = gradients(lambda x: keras.ops.sum(pairs.safe_sqrt(x)), [x])
    np.testing.assert_allclose(gradient, [0.0, 0.25])


def test_cosine_similarity_matrix_matches_loop_and_handles_zero_rows():
    _, x = _data()
    x[2] = 0.0
    expected = np.array(
        [
            [
                a @ b / (np.linalg.norm(a) * np.linalg.norm(b)) if a.any() and b.any() else 0.0
                for b in x
            ]
            for a in x
        ]
    )
    np.testing.assert_allclose(to_numpy(pairs.cosine_similarity_matrix(x)), expected, atol=1e-5)


def test_masks_match_loops():
    labels, _ = _data(n=9)
    n = len(labels)
    pos = [[labels[i] == labels[j] and i != j for j in range(n)] for i in range(n)]
    neg = [[labels[i] != labels[j] for j in range(n)] for i in range(n)]
    trip = [[[pos[a][p] and neg[a][q] for q in range(n)] for p in range(n)] for a in range(n)]
    np.testing.assert_array_equal(to_numpy(pairs.positive_mask(labels)), pos)
    np.testing.assert_array_equal(to_numpy(pairs.negative_mask(labels)), neg)
    np.testing.assert_array_equal(to_numpy(pairs.triplet_mask(labels)), trip)


def test_prepare_inputs_standardises_and_validates():
    labels, embeddings = pairs.prepare_inputs(np.array([[1.0], [2.0]]), np.ones((2, 3), "f2"))
    assert dtype_name(labels) == "int32" and tuple(labels.shape) == (2,)
    assert dtype_name(embeddings) == "float32"
    with pytest.raises(ValueError, match="embedding_dim"):
        pairs.prepare_inputs([0, 1], np.ones((2, 3, 1)))
    with pytest.raises(ValueError, match="same batch"):
        pairs.prepare_inputs([0, 1, 2], np.ones((2, 3)))


def _naive_reduction(values, pos, neg, weights, balance, normalization):
    w = np.ones_like(values) if weights is None else weights

    def mean(mask):
        if normalization == "count":
            return (values * w)[mask].sum() / max(mask.sum(), 1)
        return (values * w)[mask].sum() / w[mask].sum()

    if not pos.any() or not neg.any():
        return 0.0
    if balance == "separate":
        return mean(pos) + mean(neg)
    return mean(pos | neg)


@pytest.mark.parametrize("balance", ["joint", "separate"])
@pytest.mark.parametrize("normalization", ["count", "weights"])
@pytest.mark.parametrize("weighted", [False, True])
def test_reduce_pair_losses_matches_naive(balance, normalization, weighted):
    labels, _ = _data(seed=4)
    rng = np.random.default_rng(5)
    values = rng.random((7, 7)).astype("float32")
    weights = rng.random((7, 7)).astype("float32") if weighted else None
    pos = to_numpy(pairs.positive_mask(labels))
    neg = to_numpy(pairs.negative_mask(labels))
    loss, count = pairs.reduce_pair_losses(values, pos, neg, weights, balance, normalization)
    expected = _naive_reduction(values, pos, neg, weights, balance, normalization)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == pos.sum() + neg.sum()


def test_pair_weights_are_constants():
    labels = np.array([0, 0, 1, 1])
    pos, neg = pairs.positive_mask(labels), pairs.negative_mask(labels)
    weights = np.ones((4, 4), "float32")
    values = np.ones((4, 4), "float32")
    loss, (grad_values, grad_weights) = value_and_gradients(
        lambda v, w: pairs.reduce_pair_losses(v, pos, neg, w)[0], [values, weights]
    )
    assert float(loss) == 1.0 and np.abs(grad_values).sum() > 0.0
    np.testing.assert_array_equal(grad_weights, 0.0)


def test_reduction_rejects_unknown_options():
    with pytest.raises(ValueError, match="balance"):
        pairs.reduce_pair_losses(np.ones((2, 2)), np.eye(2) > 0, np.eye(2) > 0, balance="mean")
