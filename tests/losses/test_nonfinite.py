"""Every registered loss reports NaN for NaN or infinite embeddings.

Mining and hinges can drop a diverged embedding from a loss's value while its gradient is NaN;
the loss must then be NaN too, never a finite number that hides the problem.
"""

import keras
import numpy as np
import pytest

from keras_dml import losses

LABELS = np.array([0, 0, 1, 1, 2, 2, 3, 3], dtype="int32")
CLASS_ARGUMENTS = {"num_classes": 4, "embedding_dim": 4}


def build(name):
    """The registered loss `name`; losses with class weights or proxies get 4 classes x 4-d."""
    if losses.is_class_loss(name):
        return losses.get(name, **CLASS_ARGUMENTS)
    if losses.is_memory_loss(name):  # a wrapper: cross-batch memory around contrastive
        return losses.get(name, loss="contrastive", memory_size=16, embedding_dim=4)
    try:
        return losses.get(name)
    except TypeError:
        return losses.get(name, **CLASS_ARGUMENTS)


def _embeddings(bad_value):
    embeddings = np.random.default_rng(0).normal(size=(8, 4)).astype("float32")
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    # The bad embedding is an anchor's positive that batch-hard / hinge terms can skip.
    embeddings[7, 0] = bad_value
    return embeddings


@pytest.mark.parametrize("name", sorted(losses.LOSSES))
@pytest.mark.parametrize("bad_value", [np.nan, np.inf])
def test_loss_of_nonfinite_embeddings_is_nan(name, bad_value):
    loss = build(name)
    value = loss(LABELS, _embeddings(bad_value))
    assert np.isnan(float(keras.ops.convert_to_numpy(value))), name


@pytest.mark.parametrize("name", ["triplet", "margin", "multi_similarity"])
def test_pure_loss_function_and_count_form_are_nan(name):
    loss = losses.get(name)
    value, count = loss.loss_and_count(LABELS, _embeddings(np.nan))
    assert np.isnan(float(value)) and int(count) >= 0


@pytest.mark.parametrize("name", sorted(losses.LOSSES))
def test_finite_embeddings_keep_a_finite_loss(name):
    loss = build(name)
    embeddings = _embeddings(0.5)
    assert np.isfinite(float(keras.ops.convert_to_numpy(loss(LABELS, embeddings))))
