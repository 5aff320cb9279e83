"""SoftTriple (a class loss): a naive loop, its regulariser, conventions."""

import math

import numpy as np
import pytest

from keras_dml import losses
from tests.support import multi_center_loss_checks as checks
from tests.support.backend_utils import value_and_gradients
from tests.support.class_loss_reference import cross_entropy


def _unit(v):
    return np.asarray(v, "float64") / np.linalg.norm(v)


def _naive(labels, embeddings, centers, k, la, gamma, margin, tau):
    """Eqs. 7, 8 and 10 of Qian et al. (2019), term by term."""
    num_classes = len(centers) // k
    total = 0.0
    for x, y in zip(embeddings, labels):
        similarities = []
        for c in range(num_classes):
            s = [float(_unit(x) @ _unit(centers[c * k + j])) for j in range(k)]
            weights = [math.exp(v / gamma) for v in s]
            similarities.append(sum(w * v for w, v in zip(weights, s)) / sum(weights))
        logits = [la * (s - (margin if c == y else 0.0)) for c, s in enumerate(similarities)]
        total += cross_entropy(logits, y)
    spread = 0.0
    for c in range(num_classes):
        for t in range(k):
            for s in range(t + 1, k):
                a, b = _unit(centers[c * k + t]), _unit(centers[c * k + s])
                spread += float(np.linalg.norm(a - b))
    regulariser = spread / (num_classes * k * (k - 1)) if k > 1 else 0.0
    return total / len(labels) + tau * regulariser


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "k, la, gamma, margin, tau", [(4, 20.0, 0.1, 0.01, 0.2), (2, 8.0, 0.5, 0.1, 1.0)]
)
def test_matches_naive_loop(seed, k, la, gamma, margin, tau):
    labels, embeddings, centers = checks.multi_center_batch(seed, k)
    expected = _naive(labels, embeddings, centers, k, la, gamma, margin, tau)
    actual = losses.soft_triple_loss(labels, embeddings, centers, k, la, gamma, margin, tau)
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_regulariser_is_zero_for_merged_centers_and_one_center_per_class():
    labels, embeddings, centers = checks.multi_center_batch(3, 3)
    merged = np.repeat(centers[::3], 3, axis=0) * np.array([1.0, 2.0, 0.5] * 5)[:, None]
    without = losses.soft_triple_loss(labels, embeddings, merged, 3, tau=0.0)
    with_tau = losses.soft_triple_loss(labels, embeddings, merged, 3, tau=5.0)
    # float32: 2 - 2 cos(0) is ~1e-7, not 0, so each merged pair adds ~3e-4 to the sum.
    assert abs(float(with_tau) - float(without)) < 5.0 * 1e-3
    single = losses.soft_triple_loss(labels, embeddings, centers[:5], 1, tau=5.0)
    np.testing.assert_allclose(
        float(single), float(losses.soft_triple_loss(labels, embeddings, centers[:5], 1, tau=0.0))
    )
    spread = losses.soft_triple_loss(labels, embeddings, centers, 3, tau=5.0)
    unmerged = losses.soft_triple_loss(labels, embeddings, centers, 3, tau=0.0)
    assert float(spread) - float(unmerged) > 1.0  # random centers: ~1.4 apart, tau * 1.4 / 2


def test_merged_centers_give_finite_gradients():
    """The regulariser pulls a class's centers together (Eq. 10), so they merge in training;
    the distance `sqrt(2 - 2 cos)` is then at 0, where a plain square root's gradient is
    infinite. pytorch-metric-learning's `SparseCentersRegularizer` takes that plain root: its
    gradient is NaN for two merged centers, and the reality check's `pml/soft_triple` row
    diverged to NaN embeddings. keras-dml's (`safe_sqrt`) stays finite and keeps training."""
    labels, embeddings, centers = checks.multi_center_batch(3, 3)
    merged = centers.copy()
    merged[1] = merged[0]  # two of class 0's centers coincide
    merged[5] = 2.0 * merged[3]  # and two of class 1's, at another norm
    loss, grads = value_and_gradients(
        lambda e, w: losses.soft_triple_loss(labels, e, w, 3, tau=0.2), [embeddings, merged]
    )
    assert np.isfinite(float(loss))
    assert all(np.all(np.isfinite(g)) for g in grads) and np.any(grads[1] != 0.0)


def test_one_center_per_class_is_normalised_softmax_with_a_margin_of_zero():
    labels, embeddings, centers = checks.multi_center_batch(6, 1)
    np.testing.assert_allclose(
        float(losses.soft_triple_loss(labels, embeddings, centers, 1, la=20.0, margin=0.0)),
        float(losses.normalized_softmax_loss(labels, embeddings, centers, temperature=0.05)),
        rtol=1e-5,
    )


def test_defaults_are_the_papers_and_centers_train_at_100x():
    layer = losses.get("soft-triple", num_classes=3, embedding_dim=2)
    assert type(layer) is losses.SoftTripleLoss and losses.is_class_loss(layer)
    arguments = layer.loss_arguments()
    assert arguments == {
        "centers_per_class": 10,
        "la": 20.0,
        "gamma": 0.1,
        "margin": 0.01,
        "tau": 0.2,
    }
    assert layer.class_weight_variable.path.endswith("centers")
    optimizer = losses.class_weights.with_recommended_lr_multipliers(
        {"name": "adam"}, {"name": "soft_triple"}
    )
    assert optimizer["lr_multipliers"] == {"centers$": 100.0}


@pytest.mark.parametrize("check", checks.CHECKS, ids=checks.CHECK_IDS)
def test_conventions(check):
    check(losses.soft_triple_loss, losses.SoftTripleLoss, 3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"la": 0.0}, r"`la` must be > 0.*la=0.0$"),
        ({"gamma": -1.0}, r"`gamma` must be > 0.*gamma=-1.0$"),
        ({"tau": -0.1}, r"`tau` must be >= 0.*tau=-0.1$"),
        ({"centers_per_class": 0}, r"`centers_per_class` must be an integer >= 1.*=0$"),
    ],
)
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        losses.SoftTripleLoss(num_classes=3, embedding_dim=2, **kwargs)
