"""Sub-center ArcFace (a class loss): a naive loop, ArcFace at K = 1, conventions."""

import math

import numpy as np
import pytest

from keras_dml import losses
from tests.support import multi_center_loss_checks as checks
from tests.support.class_loss_reference import arcface_target, cross_entropy, random_batch


def _naive(labels, embeddings, weights, k, scale, margin, easy_margin=False):
    """Per sample: each class's cosine is the largest over its K sub-centers, then ArcFace."""
    unit = lambda v: np.asarray(v, "float64") / np.linalg.norm(v)  # noqa: E731
    total = 0.0
    for x, y in zip(embeddings, labels):
        cosines = [
            max(float(unit(x) @ unit(weights[c * k + j])) for j in range(k))
            for c in range(len(weights) // k)
        ]
        logits = [scale * c for c in cosines]
        logits[y] = scale * arcface_target(cosines[y], margin, easy_margin)
        total += cross_entropy(logits, y)
    return total / len(labels)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k, scale, margin", [(3, 64.0, 0.5), (2, 16.0, 0.2)])
@pytest.mark.parametrize("easy_margin", [False, True])
def test_matches_naive_loop(seed, k, scale, margin, easy_margin):
    labels, embeddings, weights = checks.multi_center_batch(seed, k)
    expected = _naive(labels, embeddings, weights, k, scale, margin, easy_margin)
    actual = losses.subcenter_arcface_loss(
        labels, embeddings, weights, k, scale=scale, margin=margin, easy_margin=easy_margin
    )
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_matches_naive_loop_beyond_the_arcface_threshold():
    """Samples opposite every sub-center of their class take ArcFace's fallback branch."""
    labels, embeddings, weights = checks.multi_center_batch(4, 2)
    weights[1::2] = weights[::2] * 2.0  # both sub-centers of a class point the same way
    embeddings[::2] = -weights[labels[::2] * 2]
    x = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    w = weights / np.linalg.norm(weights, axis=1, keepdims=True)
    assert np.sum(np.sum(x * w[labels * 2], axis=1) < math.cos(math.pi - 0.5)) >= 3
    expected = _naive(labels, embeddings, weights, 2, 64.0, 0.5)
    actual = losses.subcenter_arcface_loss(labels, embeddings, weights, 2)
    np.testing.assert_allclose(float(actual), expected, rtol=1e-5)


def test_one_sub_center_is_arcface():
    labels, embeddings, weights = random_batch(5)
    np.testing.assert_allclose(
        float(losses.subcenter_arcface_loss(labels, embeddings, weights, 1, 30.0, 0.3)),
        float(losses.arcface_loss(labels, embeddings, weights, 30.0, 0.3)),
        rtol=1e-6,
    )


def test_defaults_are_the_papers():
    layer = losses.get("subcenter-arcface", num_classes=3, embedding_dim=2)
    assert type(layer) is losses.SubCenterArcFaceLoss and losses.is_class_loss(layer)
    assert (layer.num_sub_centers, layer.scale, layer.margin, layer.easy_margin) == (
        3,
        64.0,
        0.5,
        False,
    )
    assert not getattr(layer, "recommended_lr_multipliers", None)


@pytest.mark.parametrize("check", checks.CHECKS, ids=checks.CHECK_IDS)
def test_conventions(check):
    check(losses.subcenter_arcface_loss, losses.SubCenterArcFaceLoss, 3)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"margin": 1.6}, "margin"),
        ({"scale": 0}, "scale"),
        ({"num_sub_centers": 0}, r"`num_sub_centers` must be an integer >= 1.*=0$"),
        ({"num_sub_centers": 2.5}, r"`num_sub_centers` must be an integer >= 1.*=2.5$"),
        ({"num_sub_centers": None}, r"`num_sub_centers` must be an integer >= 1.*=None$"),
    ],
)
def test_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        losses.SubCenterArcFaceLoss(num_classes=3, embedding_dim=2, **kwargs)
