"""The skeleton the pair losses share: `pair_batch`, `pair_loss` and the reductions."""

import numpy as np
import pytest
from keras import ops

from keras_dml import losses, pairs
from tests.support.backend_utils import gradients, to_numpy

LABELS = np.array([0, 0, 1, 1, 2, 2], "int32")
EMBEDDINGS = np.random.default_rng(0).normal(size=(6, 4)).astype("float32")


def _hinge(distances, positives, negatives):
    per_pair = ops.where(positives, distances, ops.relu(1.0 - distances))
    return pairs.reduce_pair_losses(per_pair, positives, negatives)


def test_pair_batch_gives_the_matrix_and_the_masks_within_pair_mask():
    keep = np.ones((6, 6), bool)
    keep[0, 1] = False
    embeddings, distances, positives, negatives = pairs.pair_batch(
        LABELS, EMBEDDINGS, "euclidean", keep
    )
    np.testing.assert_allclose(to_numpy(distances), to_numpy(pairs.pairwise_distances(EMBEDDINGS)))
    expected_positives = to_numpy(pairs.positive_mask(LABELS)) & keep
    np.testing.assert_array_equal(to_numpy(positives), expected_positives)
    np.testing.assert_array_equal(to_numpy(negatives), to_numpy(pairs.negative_mask(LABELS)))
    assert to_numpy(embeddings).dtype == np.float32


def test_pair_loss_is_its_formula_on_the_batch_with_a_count():
    loss, count = losses.pair_loss(LABELS, EMBEDDINGS, _hinge, "euclidean", return_count=True)
    distances = to_numpy(pairs.pairwise_distances(EMBEDDINGS))
    same = LABELS[:, None] == LABELS[None, :]
    off_diagonal = ~np.eye(6, dtype=bool)
    terms = np.where(same, distances, np.maximum(1.0 - distances, 0.0))[off_diagonal]
    np.testing.assert_allclose(float(loss), terms.mean(), rtol=1e-5)
    assert int(count) == 30


def test_the_regularizer_counts_only_when_the_batch_has_valid_pairs():
    def penalty(embeddings):
        return ops.sum(ops.square(embeddings))

    plain = losses.pair_loss(LABELS, EMBEDDINGS, _hinge, "euclidean")
    regularized = losses.pair_loss(LABELS, EMBEDDINGS, _hinge, "euclidean", regularizer=penalty)
    np.testing.assert_allclose(float(regularized) - float(plain), np.sum(EMBEDDINGS**2), rtol=1e-5)
    one_class = np.zeros(6, "int32")
    assert float(losses.pair_loss(one_class, EMBEDDINGS, _hinge, regularizer=penalty)) == 0.0


def test_nonfinite_embeddings_make_the_loss_nan():
    embeddings = EMBEDDINGS.copy()
    embeddings[3, 1] = np.inf
    assert np.isnan(float(losses.pair_loss(LABELS, embeddings, _hinge, "euclidean")))


@pytest.mark.parametrize("add_one", [False, True])
def test_masked_logsumexp_of_an_empty_slice_is_zero_or_log_one(add_one):
    values = np.array([[3.0, -2.0], [1.0, 5.0]], "float32")
    mask = np.array([[True, True], [False, False]])
    result = to_numpy(pairs.masked_logsumexp(values, mask, add_one=add_one))
    expected = np.log(int(add_one) + np.exp(values[0]).sum())
    np.testing.assert_allclose(result, [expected, 0.0], rtol=1e-6)
    (gradient,) = gradients(
        lambda v: ops.sum(pairs.masked_logsumexp(v, mask, add_one=add_one)), [values]
    )
    assert np.all(gradient[1] == 0.0)


def test_a_metric_loss_class_passes_its_hyper_parameters_as_attributes():
    loss = losses.CircleLoss(margin=0.25, gamma=128.0)
    assert (loss.margin, loss.gamma) == (0.25, 128.0)
    assert loss.fn_kwargs == {"margin": 0.25, "gamma": 128.0}
    assert float(loss(LABELS, EMBEDDINGS)) == float(
        losses.circle_loss(LABELS, EMBEDDINGS, margin=0.25, gamma=128.0)
    )
