"""The losses' string options build the same miners, and every pair loss takes `miner=`."""

import numpy as np
import pytest

from keras_dml import losses, miners
from tests.support.backend_utils import to_numpy

LABELS = np.array([0, 0, 1, 1, 2, 2, 2, 3], "int32")


def _batch(seed=0, dim=16):
    x = np.random.default_rng(seed).normal(size=(8, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype("float32")


ALIASES = [
    ("triplet", {"mining": "semi-hard"}, miners.SemiHardMiner()),
    ("triplet", {"mining": "batch-hard"}, miners.BatchHardMiner()),
    ("triplet", {"mining": "random"}, miners.RandomNegativeMiner()),
    ("triplet", {"mining": "all"}, miners.AllTripletsMiner()),
    ("triplet", {}, miners.SemiHardMiner()),
    ("margin", {}, miners.DistanceWeightedMiner(0.5, 1.4)),
    ("margin", {"sampling": "closest", "cutoff": 0.3}, miners.ClosestNegativeMiner(0.3)),
    ("margin", {"cutoff": 0.4, "nonzero_loss_cutoff": 1.2}, miners.DistanceWeightedMiner(0.4, 1.2)),
    ("multi_similarity", {}, miners.MultiSimilarityMiner(0.1)),
    ("multi_similarity", {"epsilon": 0.3}, miners.MultiSimilarityMiner(0.3)),
]
ALIAS_IDS = [
    f"{name}-{'-'.join(map(str, options.values())) or 'default'}" for name, options, _ in ALIASES
]


@pytest.mark.parametrize("name, options, miner", ALIASES, ids=ALIAS_IDS)
def test_an_option_builds_the_miner_and_the_same_values(name, options, miner):
    seeded = {} if name == "multi_similarity" else {"seed": 3}  # random miners: same draws
    by_option = losses.get(name, **seeded, **options)
    by_object = losses.get(name, miner=miner, **seeded)
    assert by_option.miner == miner and type(by_option.miner) is type(miner)
    x = _batch()
    first, second = by_option.loss_and_count(LABELS, x), by_object.loss_and_count(LABELS, x)
    assert float(first[0]) == float(second[0]) and int(first[1]) == int(second[1])
    assert float(first[0]) > 0.0


def test_the_learnable_margin_layer_takes_a_miner_too():
    by_option = losses.LearnableMarginLoss(sampling="closest", cutoff=0.3)
    by_object = losses.LearnableMarginLoss(miner={"name": "closest", "cutoff": 0.3})
    assert by_option.miner == by_object.miner == miners.ClosestNegativeMiner(0.3)
    x = _batch(1)
    assert float(by_option(LABELS, x)) == float(by_object(LABELS, x))


def test_a_run_configuration_reaches_the_miner():
    loss = losses.get({"name": "triplet", "miner": {"name": "semi_hard"}})
    assert loss.miner == miners.SemiHardMiner()
    loss = losses.get({"name": "multi_similarity", "miner": {"name": "all_pairs"}})
    assert loss.miner == miners.AllPairsMiner()


def test_a_miner_changes_what_the_loss_sees():
    x = _batch(2)
    hard = losses.TripletLoss(miner="batch_hard").loss_and_count(LABELS, x)
    every = losses.TripletLoss(miner="all_triplets").loss_and_count(LABELS, x)
    assert int(hard[1]) == 7  # one triplet per anchor with a positive (label 3 has none)
    loop = sum(
        1
        for a in range(8)
        for p in range(8)
        for n in range(8)
        if a != p and LABELS[a] == LABELS[p] and LABELS[n] != LABELS[a]
    )
    assert int(every[1]) == loop


@pytest.mark.parametrize(
    "name, options, miner",
    [
        ("triplet", {"mining": "semi-hard"}, "batch_hard"),
        ("margin", {"sampling": "closest"}, "closest"),
        ("margin", {"cutoff": 0.3}, "distance_weighted"),
        ("multi_similarity", {"epsilon": 0.2}, "multi_similarity"),
    ],
)
def test_an_option_and_a_miner_together_are_refused_in_one_line(name, options, miner):
    with pytest.raises(ValueError, match="pass one of them") as error:
        losses.get(name, miner=miner, **options)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "name, miner, message",
    [
        ("triplet", "multi_similarity", "takes a TripletMiner"),
        ("margin", "all_triplets", "AllTripletsMiner gives every negative"),
        ("multi_similarity", "semi_hard", "takes a PairMiner"),
        ("contrastive", "semi_hard", "takes a pair miner"),
        ("npairs", "all_pairs", "takes no miner"),
        ("proxy_anchor", "all_pairs", "takes no miner"),
        ("triplet", "semi_hrad", "Did you mean"),
    ],
)
def test_a_miner_a_loss_cannot_use_is_refused_in_one_line(name, miner, message):
    sizes = {"num_classes": 3, "embedding_dim": 4} if name == "proxy_anchor" else {}
    with pytest.raises(ValueError, match=message) as error:
        losses.get(name, miner=miner, **sizes)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    "name", ["contrastive", "binomial_deviance", "circle", "ntxent", "supcon", "fast_ap"]
)
def test_a_pair_loss_with_a_pair_miner_is_the_loss_on_the_mined_pairs(name):
    x = _batch(3, dim=6)
    miner = miners.MultiSimilarityMiner(0.05)
    mined = to_numpy(miner(x, LABELS).pair_mask())
    assert 0 < mined.sum() < 8 * 7  # the miner drops some pairs
    loss = losses.get(name, miner=miner)
    expected = losses.get(name).fn(LABELS, x, pair_mask=mined, **losses.get(name).fn_kwargs)
    assert float(loss(LABELS, x)) == pytest.approx(float(expected), rel=1e-6)
    assert float(loss(LABELS, x)) != pytest.approx(float(losses.get(name)(LABELS, x)), rel=1e-6)


def test_cross_batch_memory_mines_batch_to_memory_pairs_with_a_pair_miner():
    older, x = _batch(4, dim=6), _batch(5, dim=6)
    miner = miners.MultiSimilarityMiner(0.05)
    xbm = losses.CrossBatchMemory("contrastive", memory_size=24, embedding_dim=6, miner=miner)
    plain = losses.CrossBatchMemory("contrastive", memory_size=24, embedding_dim=6)
    for memory in (xbm, plain):
        memory(LABELS, older)  # slots 0..7; the batch then goes to slots 8..15; 16..23 stay empty
    loss = float(xbm(LABELS, x))
    # Rows: the batch, then the memory [older; batch; 8 empty slots]; anchors are the batch rows,
    # references every filled slot but the anchor's own copy.
    empty = to_numpy(xbm.memory_embeddings)[0, 16:]
    rows = np.concatenate([x, older, x, empty])
    labels = np.concatenate([LABELS, LABELS, LABELS, to_numpy(xbm.memory_labels)[0, 16:]])
    allowed = np.zeros((32, 32), bool)
    allowed[:8, 8:24] = True
    allowed[np.arange(8), 16 + np.arange(8)] = False
    mined = to_numpy(miner(rows, labels, pair_mask=allowed).pair_mask())
    assert mined.sum() < allowed.sum() and not (mined & ~allowed).any()
    expected = losses.contrastive_loss(labels, rows, pair_mask=mined)
    assert loss == pytest.approx(float(expected), rel=1e-6)
    assert loss != pytest.approx(float(plain(LABELS, x)), rel=1e-6)


def test_cross_batch_memory_gives_its_triplet_miner_to_the_wrapped_loss():
    x = _batch(5, dim=6)
    by_xbm = losses.CrossBatchMemory(
        {"name": "triplet"}, memory_size=8, embedding_dim=6, miner="batch_hard"
    )
    inner = losses.CrossBatchMemory(
        {"name": "triplet", "mining": "batch-hard"}, memory_size=8, embedding_dim=6
    )
    assert float(by_xbm(LABELS, x)) == float(inner(LABELS, x))
    with pytest.raises(ValueError, match="mines none") as error:
        losses.CrossBatchMemory("contrastive", memory_size=8, embedding_dim=6, miner="semi_hard")
    assert "\n" not in str(error.value)


def test_distance_weighted_sampling_on_squared_distances_is_refused_in_one_line():
    loss = losses.TripletLoss(squared=True, miner="distance_weighted", seed=0)
    with pytest.raises(ValueError, match="use squared=False") as error:
        loss(LABELS, _batch())
    assert "\n" not in str(error.value)
