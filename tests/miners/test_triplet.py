"""Triplet miners against naive loops: semi-hard, batch-hard, random, distance-weighted,
closest, all triplets."""

import keras
import numpy as np
import pytest

from keras_dml import miners
from tests.support.backend_utils import to_numpy

LABELS = np.array([0, 0, 1, 1, 2, 2, 2, 3])


def _unit_batch(seed=0, n=8, dim=6):
    x = np.random.default_rng(seed).normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype("float32")


def _distances(x):
    return np.array([[np.linalg.norm(a - b) for b in x] for a in x])


def _selection(miner, x, labels=LABELS, **kwargs):
    selection = miner(x, labels, **kwargs)
    index = None if selection.negative_index is None else to_numpy(selection.negative_index)
    return to_numpy(selection.valid), index


def _is_positive(labels, a, p):
    return a != p and labels[a] == labels[p]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_semi_hard_matches_naive_loop(seed):
    x = _unit_batch(seed)
    d = _distances(x)
    valid, index = _selection(miners.SemiHardMiner(), x)
    for a in range(8):
        negatives = [n for n in range(8) if LABELS[n] != LABELS[a]]
        for p in range(8):
            assert valid[a, p] == (_is_positive(LABELS, a, p) and bool(negatives))
            if not valid[a, p]:
                continue
            farther = [n for n in negatives if d[a, n] > d[a, p]]
            expected = (
                min(farther, key=lambda n: d[a, n])
                if farther
                else max(negatives, key=lambda n: d[a, n])
            )
            assert index[a, p] == expected


@pytest.mark.parametrize("seed", [0, 1])
def test_batch_hard_matches_naive_loop(seed):
    x = _unit_batch(seed)
    d = _distances(x)
    valid, index = _selection(miners.BatchHardMiner(), x)
    for a in range(8):
        positives = [p for p in range(8) if _is_positive(LABELS, a, p)]
        negatives = [n for n in range(8) if LABELS[n] != LABELS[a]]
        expected = np.zeros(8, bool)
        if positives and negatives:
            hardest = max(positives, key=lambda p: d[a, p])
            expected[hardest] = True
            assert index[a, hardest] == min(negatives, key=lambda n: d[a, n])
        np.testing.assert_array_equal(valid[a], expected)  # label 3's anchor has no positive


def test_random_negatives_are_negatives_and_vary():
    x = _unit_batch(3)
    seed = keras.random.SeedGenerator(0)
    draws = [_selection(miners.RandomNegativeMiner(), x, seed=seed) for _ in range(20)]
    for valid, index in draws:
        for a, p in zip(*np.nonzero(valid)):
            assert _is_positive(LABELS, a, p)
            assert LABELS[index[a, p]] != LABELS[a]
    chosen = {int(index[4, 5]) for _, index in draws}  # anchor 4 has five negatives
    assert len(chosen) >= 3


def test_distance_weighted_draws_only_negatives_below_the_cutoff():
    x = _unit_batch(4, dim=16)
    d = _distances(x)
    seed = keras.random.SeedGenerator(1)
    miner = miners.DistanceWeightedMiner(cutoff=0.5, nonzero_loss_cutoff=1.4)
    for _ in range(10):
        valid, index = _selection(miner, x, seed=seed)
        for a in range(8):
            eligible = [n for n in range(8) if LABELS[n] != LABELS[a] and d[a, n] < 1.4]
            for p in range(8):
                assert valid[a, p] == _is_positive(LABELS, a, p)
                if valid[a, p] and eligible:
                    assert index[a, p] in eligible


def test_closest_matches_naive_loop():
    x = _unit_batch(5)
    d = _distances(x)
    cutoff = 1.3  # leaves out some negatives of this batch
    assert ((d < cutoff) & (LABELS[:, None] != LABELS[None, :])).any()
    valid, index = _selection(miners.ClosestNegativeMiner(cutoff=cutoff), x)
    for a in range(8):
        ranked = sorted(
            (n for n in range(8) if LABELS[n] != LABELS[a] and d[a, n] >= cutoff),
            key=lambda n: d[a, n],
        )
        positives = [p for p in range(8) if _is_positive(LABELS, a, p)]
        for rank, p in enumerate(positives):
            assert valid[a, p] == (rank < len(ranked))
            if valid[a, p]:
                assert index[a, p] == ranked[rank]
        others = [p for p in range(8) if p not in positives]
        assert not valid[a, others].any()


def test_all_triplets_keeps_every_positive_slot():
    valid, index = _selection(miners.AllTripletsMiner(), _unit_batch(6))
    expected = [[_is_positive(LABELS, a, p) for p in range(8)] for a in range(8)]
    np.testing.assert_array_equal(valid, expected)
    assert index is None


def test_pair_mask_restricts_what_a_miner_sees():
    x = _unit_batch(7)
    keep = np.ones((8, 8), bool)
    keep[0, 1] = False  # anchor 0 loses its only positive
    keep[2, 4:] = False  # anchor 2 keeps only negatives 0 and 1
    valid, index = _selection(miners.SemiHardMiner(), x, pair_mask=keep)
    assert not valid[0].any()
    assert valid[2, 3] and index[2, 3] in (0, 1)


def test_distance_weighted_needs_a_known_width_and_ordered_cutoffs():
    with pytest.raises(ValueError, match="0 <= cutoff < nonzero_loss_cutoff") as error:
        miners.DistanceWeightedMiner(cutoff=1.5, nonzero_loss_cutoff=1.4)
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="static embedding dimension"):
        miners.DistanceWeightedMiner().mine(np.zeros((2, 2), "float32"), None, None)
