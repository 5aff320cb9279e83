"""Cross-batch memory on the block of batch x memory equals the square over batch plus memory.

The reference is the former computation, kept here: the wrapped loss on `[batch; memory]` with a
`[B + M, B + M]` pair mask whose only pairs are the batch-to-memory block. Over a sequence of
batches that wraps the memory around, every wrappable loss (with its miners, a memory miner and a
callable pair mask) gives the same loss, count and gradient both ways.
"""

import keras
import numpy as np
import pytest
from keras import ops

from keras_dml import backbones, losses, miners
from keras_dml.data import load_dataset
from keras_dml.losses import CrossBatchMemory
from keras_dml.losses.cross_batch_memory import footprint, memory_block_shape
from keras_dml.losses.cross_batch_memory.footprint import check_memory_entry
from keras_dml.miners.base import PairMiner, TripletMiner
from keras_dml.models import EmbeddingModel
from keras_dml.training import resolve_run
from tests.support.backend_utils import to_numpy, value_and_gradients

BATCH, MEMORY, DIM = 8, 20, 6


def square_reference(inner_loss, miner, labels, embeddings, ref_labels, references, filled, own):
    """The former `loss_against_memory`: the loss on `[batch; memory]` under a square mask."""
    batch_size = len(labels)
    allowed = np.zeros((batch_size + MEMORY,) * 2, bool)
    allowed[:batch_size, batch_size : batch_size + filled] = True
    allowed[np.arange(batch_size), batch_size + own] = False
    all_labels = np.concatenate([labels, ref_labels])
    all_embeddings = ops.concatenate([embeddings, ops.convert_to_tensor(references)], axis=0)
    pair_mask = ops.convert_to_tensor(allowed)
    if isinstance(miner, PairMiner):
        pair_mask = miner(all_embeddings, all_labels, pair_mask=pair_mask).pair_mask()
    elif miner is not None and not isinstance(miner, TripletMiner):
        mined = to_numpy(miner(labels, embeddings, ref_labels, references)).astype(bool)
        narrowed = np.zeros_like(allowed)
        narrowed[:batch_size, batch_size:] = mined
        pair_mask = ops.logical_and(pair_mask, narrowed)
    triplet_miner = miner if isinstance(miner, TripletMiner) else None
    return inner_loss.compute(
        all_labels, all_embeddings, return_count=True, pair_mask=pair_mask, miner=triplet_miner
    )


@keras.saving.register_keras_serializable(package="keras_dml_tests")
def close_pairs_only(labels, embeddings, ref_labels, ref_embeddings):
    """A callable pair mask: the pairs with a positive inner product."""
    return ops.matmul(embeddings, ops.transpose(ref_embeddings)) > 0.0


CASES = {
    "contrastive": ({"name": "contrastive"}, None),
    "contrastive_cosine": ({"name": "contrastive", "similarity": "cosine"}, None),
    "contrastive_own_miner": ({"name": "contrastive", "miner": "multi_similarity"}, None),
    "contrastive_memory_miner": ({"name": "contrastive"}, miners.MultiSimilarityMiner(0.05)),
    "contrastive_pair_mask": ({"name": "contrastive"}, close_pairs_only),
    "binomial_deviance": ({"name": "binomial_deviance"}, None),
    "multi_similarity": ({"name": "multi_similarity"}, None),
    "ntxent": ({"name": "ntxent"}, close_pairs_only),
    "supcon": ({"name": "supcon"}, None),
    "circle": ({"name": "circle"}, None),
    "lifted_structure": ({"name": "lifted_structure"}, None),
    "tuplet_margin": ({"name": "tuplet_margin"}, None),
    "snr_contrastive": ({"name": "snr_contrastive", "regularization": 0.1}, None),
    "fast_ap": ({"name": "fast_ap"}, None),
    "triplet_semi_hard": ({"name": "triplet"}, None),
    "triplet_all": ({"name": "triplet", "mining": "all"}, close_pairs_only),
    "triplet_memory_batch_hard": ({"name": "triplet"}, "batch_hard"),
    "margin_closest": ({"name": "margin", "sampling": "closest"}, None),
    # Random draws differ between the two shapes: the count (which slots get a triplet) is
    # compared, and the loss is finite.
    "triplet_random": ({"name": "triplet", "mining": "random", "seed": 0}, None),
    "margin_distance_weighted": ({"name": "margin", "seed": 0}, None),
}
RANDOM = {"triplet_random", "margin_distance_weighted"}


def batches(seed, steps=3):
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        labels = rng.integers(0, 4, BATCH).astype("int32")
        embeddings = rng.normal(size=(BATCH, DIM)).astype("float32")
        yield labels, embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)


def enqueued(xbm, labels, embeddings):
    """The memory after enqueuing the batch (as the layer's step sees it), and the own slots."""
    start = int(to_numpy(xbm.write_index)[0])
    own = (start + np.arange(len(labels))) % MEMORY
    references = to_numpy(xbm.memory_embeddings)[0].copy()
    ref_labels = to_numpy(xbm.memory_labels)[0].copy()
    references[own], ref_labels[own] = embeddings, labels
    filled = min(int(to_numpy(xbm.filled)[0]) + len(labels), MEMORY)
    return ref_labels, references, filled, own


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_block_equals_the_square_over_batch_plus_memory(case, seed):
    loss_config, miner = CASES[case]
    xbm = CrossBatchMemory(loss_config, MEMORY, DIM, miner=miner)
    inner, memory_miner = xbm.inner_loss, xbm.miner
    for labels, embeddings in batches(seed):
        ref_labels, references, filled, own = enqueued(xbm, labels, embeddings)
        value, (gradient,) = value_and_gradients(
            lambda e, labels=labels: xbm(labels, e, update=False), [embeddings]
        )
        _, count = xbm(labels, embeddings, return_count=True)
        memory = (ref_labels, references, filled, own)
        expected, (expected_gradient,) = value_and_gradients(
            lambda e, labels=labels, memory=memory: square_reference(
                inner, memory_miner, labels, e, *memory
            )[0],
            [embeddings],
        )
        _, expected_count = square_reference(
            inner, memory_miner, labels, embeddings, ref_labels, references, filled, own
        )
        assert int(count) == int(expected_count), case
        if case in RANDOM:
            assert np.isfinite(value) and np.isfinite(gradient).all()
            continue
        np.testing.assert_allclose(value, expected, rtol=1e-4, atol=1e-6, err_msg=case)
        np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-3, atol=1e-5, err_msg=case)
    assert int(to_numpy(xbm.filled)[0]) == MEMORY  # the three batches wrapped the memory around


def test_no_square_over_batch_plus_memory_is_built():
    """Every matrix the wrapped loss sees is `[B, M]`: a 4 x 50,000 memory step on 64-d
    embeddings, where a `[B + M, B + M]` float32 matrix would take 10 GB."""
    xbm = losses.get(
        {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 50_000},
        embedding_dim=64,
    )
    labels = np.arange(4, dtype="int32") % 2
    embeddings = np.random.default_rng(0).normal(size=(4, 64)).astype("float32")
    for _ in range(2):
        loss, count = xbm(labels, embeddings, return_count=True)
    assert np.isfinite(float(loss)) and int(count) == 4 * 7  # 8 filled slots, own copy left out


def test_a_memory_of_60000_slots_of_128_d_trains_on_digits():
    """The dataset-scale memory of the XBM paper: 60,000 x 128 (about SOP's training split) on a
    model trained with `fit`, every batch enqueued and the loss finite. It runs on every backend
    CI runs the loss tests on (TensorFlow, PyTorch, JAX)."""
    images, labels = digits_images()
    backbone = backbones.get("convnet", input_shape=(32, 32, 3), width=4)
    model = EmbeddingModel(backbone, embedding_dim=128)
    xbm = {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 60_000}
    model.compile(optimizer="adam", loss=losses.get(xbm, embedding_dim=128))
    history = model.fit(images, labels, batch_size=64, epochs=1, steps_per_epoch=3, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    (memory,) = [layer for layer in model._flatten_layers() if losses.is_memory_loss(layer)]
    assert memory.memory_size == 60_000 and int(to_numpy(memory.filled)[0]) == 3 * 64


def test_a_memory_whose_block_cannot_fit_is_refused_before_training(tmp_path):
    """Semi-hard triplets score every (anchor, positive, negative): `[B, M, M]`. At 60,000 slots
    that is terabytes: `train` refuses it when it resolves the run, in one line naming the fix."""
    with pytest.raises(ValueError, match=r"\[64, 60000, 60000\] block .* use a pair loss"):
        check_memory_entry(
            {"name": "cross_batch_memory", "loss": {"name": "triplet"}, "memory_size": 60_000}, 64
        )
    # The same memory with a pair loss is a [64, 60000] block: within 8 GiB.
    pair = {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 60_000}
    check_memory_entry(pair, 64, available=8 * 2**30)
    with pytest.raises(ValueError, match=r"use memory_size <= \d+ or a smaller batch"):
        check_memory_entry(pair, 64, available=2**20)
    config = {
        "method": "baseline",
        "dataset": "digits",
        "loss": {**pair, "loss": {"name": "triplet"}},
        "batch_size": 16,
        "m_per_class": 4,
    }
    with pytest.raises(ValueError, match=r"\[16, 60000, 60000\] block"):
        resolve_run(config, {"train": load_dataset("digits", split="train", image_size=32)})


def test_a_hand_compiled_memory_is_refused_when_its_loss_is_traced(monkeypatch):
    """Outside `train`, the layer refuses on its first call. With 1 MiB free, the semi-hard
    `[4, 200, 200]` block (10 MiB at 64 bytes an element) cannot fit."""
    monkeypatch.setattr(footprint, "available_memory_bytes", lambda: 2**20)
    layer = CrossBatchMemory({"name": "triplet"}, memory_size=200, embedding_dim=8)
    with pytest.raises(ValueError, match=r"\[4, 200, 200\] block .* memory_size <= 64"):
        layer(np.arange(4, dtype="int32") % 2, np.ones((4, 8), "float32"))
    # A pair loss at the same size is a [4, 200] block: it runs.
    assert np.isfinite(
        float(CrossBatchMemory("contrastive", 200, 8)(np.arange(4) % 2, np.ones((4, 8))))
    )


def test_the_block_shape_follows_the_triplet_miner_in_effect():
    shape = lambda loss, miner=None: memory_block_shape(losses.get(loss), miner, 8, 100)  # noqa: E731
    assert shape({"name": "contrastive"}) == (8, 100)
    assert shape({"name": "triplet", "mining": "batch-hard"}) == (8, 100)
    assert shape({"name": "margin"}) == (8, 100)  # distance-weighted: one negative per pair
    for mining in ("semi-hard", "all", "random"):
        assert shape({"name": "triplet", "mining": mining}) == (8, 100, 100), mining
    # The memory's own triplet miner replaces the loss's.
    assert shape({"name": "triplet"}, miners.BatchHardMiner()) == (8, 100)


def digits_images():
    data = load_dataset("digits", split="train", image_size=32)
    images, labels = [], []
    for batch_images, batch_labels in data.as_dataset(training=False, batch_size=256):
        images.append(to_numpy(batch_images))
        labels.append(to_numpy(batch_labels))
    return np.concatenate(images), np.concatenate(labels)
