"""Lifted structured loss (Oh Song et al. 2016, Eq. 4): a naive loop, conventions."""

import numpy as np
import pytest

from keras_dml import losses
from tests.support import pair_loss_checks as checks


def _naive(labels, x, margin):
    """Eq. 4 over unordered positive pairs: 1/(2|P|) sum max(0, J_ij)^2."""
    n = len(labels)
    d = np.linalg.norm(x[:, None] - x[None], axis=-1)
    terms, negative_pairs = [], set()
    for i in range(n):
        for j in range(i + 1, n):
            if labels[i] != labels[j]:
                continue
            neg_i = [k for k in range(n) if labels[k] != labels[i]]
            neg_j = [k for k in range(n) if labels[k] != labels[j]]
            total = sum(np.exp(margin - d[i, k]) for k in neg_i)
            total += sum(np.exp(margin - d[j, k]) for k in neg_j)
            terms.append(max(np.log(total) + d[i, j], 0.0) ** 2)
            negative_pairs |= {(i, k) for k in neg_i} | {(j, k) for k in neg_j}
    count = 2 * len(terms) + len(negative_pairs)  # ordered positive pairs and their negatives
    return float(np.sum(terms) / (2 * len(terms))), count


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("margin", [1.0, 3.0])
def test_lifted_structure_matches_naive_loop(seed, margin):
    rng = np.random.default_rng(seed)
    labels = np.append(rng.integers(0, 3, size=8), 7)  # class 7: a sample without positive
    x = rng.normal(size=(9, 5))
    loss, count = losses.lifted_structure_loss(
        labels, x.astype("float32"), margin=margin, return_count=True
    )
    expected, expected_count = _naive(labels, x, margin)
    np.testing.assert_allclose(float(loss), expected, rtol=1e-5)
    assert int(count) == expected_count


def test_normalize_embeddings_is_the_loss_of_unit_vectors():
    labels, x = checks.batch(seed=5)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(
        float(losses.lifted_structure_loss(labels, 3.0 * x, normalize_embeddings=True)),
        _naive(labels, unit.astype("float64"), 1.0)[0],
        rtol=1e-5,
    )


@pytest.mark.parametrize("check", checks.LOSS_CHECKS, ids=checks.LOSS_CHECK_IDS)
def test_conventions(check):
    check(losses.LiftedStructureLoss(margin=1.0))


def test_pair_mask_selects_pairs():
    checks.pair_mask_selects_pairs(losses.lifted_structure_loss, margin=1.0)
