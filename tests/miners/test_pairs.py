"""Pair miners against naive loops: multi-similarity (Wang et al. 2019) and all pairs."""

import numpy as np
import pytest

from keras_dml import miners
from tests.support.backend_utils import to_numpy

LABELS = np.array([0, 0, 0, 1, 1, 2, 2, 3])


def _batch(seed):
    return np.random.default_rng(seed).normal(size=(8, 5)).astype("float32")


def _cosines(x):
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit @ unit.T


@pytest.mark.parametrize("seed, epsilon", [(0, 0.1), (1, 0.3), (2, 0.0)])
def test_multi_similarity_miner_matches_naive_loop(seed, epsilon):
    x = _batch(seed)
    s = _cosines(x)
    selection = miners.MultiSimilarityMiner(epsilon)(x, LABELS)
    positives, negatives = to_numpy(selection.positives), to_numpy(selection.negatives)
    for i in range(8):
        pos = [j for j in range(8) if j != i and LABELS[j] == LABELS[i]]
        neg = [k for k in range(8) if LABELS[k] != LABELS[i]]
        for j in range(8):
            keep = j in pos and bool(neg) and s[i, j] - epsilon < max(s[i, k] for k in neg)
            assert positives[i, j] == keep, (i, j)
            keep = j in neg and bool(pos) and s[i, j] + epsilon > min(s[i, p] for p in pos)
            assert negatives[i, j] == keep, (i, j)


def test_all_pairs_keeps_every_pair_and_the_mask():
    keep = np.ones((8, 8), bool)
    keep[0, 1] = keep[0, 3] = False
    selection = miners.AllPairsMiner()(_batch(3), LABELS, pair_mask=keep)
    same = LABELS[:, None] == LABELS[None, :]
    np.testing.assert_array_equal(
        to_numpy(selection.positives), same & ~np.eye(8, dtype=bool) & keep
    )
    np.testing.assert_array_equal(to_numpy(selection.negatives), ~same & keep)
    np.testing.assert_array_equal(to_numpy(selection.pair_mask()), keep & ~np.eye(8, dtype=bool))
