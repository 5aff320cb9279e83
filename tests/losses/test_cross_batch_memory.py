"""Cross-batch memory (XBM): enqueue-then-loss, detached memory, FIFO slots, warm-up, refusals.

The values after each batch of a stored sequence equal pytorch-metric-learning's
`CrossBatchMemory` (`tests/reference/pml_loss_values.json`, `xbm_cases`; no torch needed here).
"""

import json
import os

import keras
import numpy as np
import pytest

from keras_dml import losses
from keras_dml.losses import CrossBatchMemory, contrastive_loss
from tests.support.backend_utils import gradients, to_numpy, traced
from tests.support.paths import REFERENCE_DIR

REFERENCE = os.path.join(REFERENCE_DIR, "pml_loss_values.json")
with open(REFERENCE) as f:
    DATA = json.load(f)


def batch(seed, size=8, classes=(0, 1, 2, 3), dim=4):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.asarray(classes, "int32"), size // len(classes))
    embeddings = rng.normal(size=(size, dim)).astype("float32")
    return labels, embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)


def memory(loss=None, memory_size=12, embedding_dim=4, **kwargs):
    return CrossBatchMemory(
        loss or {"name": "contrastive"}, memory_size, embedding_dim=embedding_dim, **kwargs
    )


@pytest.mark.parametrize("case", DATA["xbm_cases"], ids=lambda case: case["loss"])
def test_equals_pytorch_metric_learning_over_a_sequence_of_batches(case):
    xbm = memory({"name": case["loss"], **case["arguments"]}, case["memory_size"], 6)
    ours = []
    for stored in DATA["xbm_batches"]:
        labels = np.asarray(stored["labels"], "int32")
        ours.append(float(xbm(labels, np.asarray(stored["embeddings"], "float32"))))
    # float32 here, float64 in PML; the memory wraps around at the third batch.
    np.testing.assert_allclose(ours, case["pml_values"], rtol=1e-5, atol=1e-6)


def test_the_batch_is_enqueued_before_the_loss():
    """On an empty memory the batch meets its own copy: the in-batch loss (0 if enqueued after)."""
    labels, embeddings = batch(0)
    loss, count = memory()(labels, embeddings, return_count=True)
    expected, expected_count = contrastive_loss(labels, embeddings, return_count=True)
    assert int(count) == int(expected_count) == 8 * 7
    np.testing.assert_allclose(float(loss), float(expected), rtol=1e-6)
    assert float(loss) > 0.1


@pytest.mark.parametrize(
    "name",
    [
        "contrastive",
        "ntxent",
        "supcon",
        "circle",
        "tuplet_margin",
        "snr_contrastive",
        "fast_ap",
        "triplet",
        "multi_similarity",
        "binomial_deviance",
    ],
)
def test_on_an_empty_memory_every_wrappable_loss_equals_its_in_batch_value(name):
    """The memory rows take no part as anchors: each loss's own reduction over anchors is
    unchanged. (Lifted structure differs by design: a positive pair's second sample is a memory
    slot, whose negatives XBM never computes.)"""
    labels, embeddings = batch(8)
    xbm = memory({"name": name}, memory_size=16)
    np.testing.assert_allclose(
        float(xbm(labels, embeddings)), float(losses.get(name)(labels, embeddings)), rtol=1e-5
    )


def test_only_the_current_batch_carries_gradients():
    """The memory copy is a constant: each pair's gradient reaches only its anchor, half of what
    the in-batch loss (where both ends of a pair move) gives."""
    labels, embeddings = batch(1)
    xbm = memory()
    (ours,) = gradients(lambda e: xbm(labels, e), [embeddings])
    (in_batch,) = gradients(lambda e: contrastive_loss(labels, e), [embeddings])
    assert np.abs(in_batch).max() > 1e-3
    np.testing.assert_allclose(ours, 0.5 * in_batch, rtol=1e-5, atol=1e-7)


def test_the_memory_is_a_fifo_queue_of_the_last_slots():
    xbm = memory(memory_size=12)
    seen = []
    for step in range(3):
        labels, embeddings = batch(step, classes=(step, step + 10, step + 20, step + 30))
        xbm(labels, embeddings)
        seen.append((labels, embeddings))
    # 24 samples into 12 circular slots: batch 1 wrapped into slots 8-11 then 0-3, batch 2
    # wrote slots 4-11; batch 0 is gone.
    np.testing.assert_array_equal(to_numpy(xbm.write_index), [0])
    np.testing.assert_array_equal(to_numpy(xbm.filled), [12])
    expected_labels = np.concatenate([seen[1][0][4:], seen[2][0]])
    np.testing.assert_array_equal(to_numpy(xbm.memory_labels)[0], expected_labels)
    expected = np.concatenate([seen[1][1][4:], seen[2][1]])
    np.testing.assert_allclose(to_numpy(xbm.memory_embeddings)[0], expected, rtol=1e-6)


def test_a_sample_is_not_paired_with_its_own_copy_but_with_older_ones():
    labels, embeddings = batch(2)
    xbm = memory(memory_size=16)
    xbm(labels, embeddings)
    _, count = xbm(labels, embeddings, return_count=True)
    # 16 filled slots, minus each anchor's own (newest) copy: its older copy is a positive.
    assert int(count) == 8 * 15


def test_warm_up_uses_the_batch_loss_and_leaves_the_memory_empty():
    xbm = memory(warmup_steps=2)
    for step in range(2):
        labels, embeddings = batch(step)
        np.testing.assert_allclose(
            float(xbm(labels, embeddings)), float(contrastive_loss(labels, embeddings)), rtol=1e-6
        )
        np.testing.assert_array_equal(to_numpy(xbm.filled), [0])
    labels, embeddings = batch(2)
    _, count = xbm(labels, embeddings, return_count=True)
    assert int(count) == 8 * 7  # the memory starts with this batch only
    np.testing.assert_array_equal(to_numpy(xbm.filled), [8])


def test_a_discarded_call_neither_enqueues_nor_counts_a_step():
    xbm = memory(warmup_steps=1)
    labels, embeddings = batch(6)
    xbm(labels, embeddings, update=False)
    np.testing.assert_array_equal(to_numpy(xbm.steps), [0])
    xbm(labels, embeddings)  # the warm-up step
    xbm(labels, embeddings, update=False)
    np.testing.assert_array_equal(to_numpy(xbm.steps), [1])
    np.testing.assert_array_equal(to_numpy(xbm.filled), [0])
    xbm(labels, embeddings)
    np.testing.assert_array_equal(to_numpy(xbm.filled), [8])


def test_each_memory_key_has_its_own_queue_and_narrower_slices_are_zero_padded():
    xbm = memory(num_memories=2, embedding_dim=6)
    labels, embeddings = batch(3)
    xbm(labels, embeddings, memory=1)
    np.testing.assert_array_equal(to_numpy(xbm.filled), [0, 8])
    stored = to_numpy(xbm.memory_embeddings)[1, :8]
    np.testing.assert_allclose(stored[:, :4], embeddings, rtol=1e-6)
    np.testing.assert_array_equal(stored[:, 4:], 0.0)
    np.testing.assert_array_equal(to_numpy(xbm.memory_embeddings)[0], 0.0)


@keras.saving.register_keras_serializable(package="keras_dml_tests")
def same_label_pairs_only(labels, embeddings, ref_labels, ref_embeddings):
    """A miner that keeps only the positive pairs."""
    return keras.ops.equal(labels[:, None], ref_labels[None, :])


def test_a_miner_restricts_the_pairs_and_serialises():
    xbm = memory(miner=same_label_pairs_only)
    labels, embeddings = batch(4)
    loss, count = xbm(labels, embeddings, return_count=True)
    assert int(count) == 0 and float(loss) == 0.0  # positives only: no negative pair
    restored = CrossBatchMemory.from_config(xbm.get_config())
    assert restored.miner is same_label_pairs_only


def test_the_config_entry_builds_it_and_its_config_round_trips():
    xbm = losses.get(
        {"name": "cross_batch_memory", "loss": {"name": "contrastive", "margin": 0.7}},
        memory_size=64,
        embedding_dim=8,
    )
    config = xbm.get_config()
    restored = CrossBatchMemory.from_config(config)
    assert restored.get_config() == config
    assert restored.inner_loss.margin == 0.7
    filled = losses.with_class_arguments(
        {"name": "cross_batch_memory", "loss": {"name": "ntxent"}}, num_classes=10, embedding_dim=32
    )
    assert filled == {"name": "cross_batch_memory", "loss": {"name": "ntxent"}, "embedding_dim": 32}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"loss": {"name": "npairs"}}, "takes `pair_mask`"),
        ({"loss": "proxy_anchor"}, "takes `pair_mask`"),
        ({"memory_size": 0}, "memory_size"),
        ({"warmup_steps": -1}, "warmup_steps"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(arguments, message):
    options = {"loss": {"name": "contrastive"}, "memory_size": 8, "embedding_dim": 4, **arguments}
    if options["loss"] == "proxy_anchor":
        options["loss"] = losses.get("proxy_anchor", num_classes=3, embedding_dim=4)
    with pytest.raises(ValueError, match=message) as error:
        CrossBatchMemory(**options)
    assert "\n" not in str(error.value)


def test_wider_embeddings_and_batches_larger_than_the_memory_are_refused():
    labels, embeddings = batch(5, dim=4)
    with pytest.raises(ValueError, match="embedding_dim=4"):
        memory(embedding_dim=3)(labels, embeddings)
    with pytest.raises(ValueError, match="memory_size >= the global batch"):
        memory(memory_size=4)(labels, embeddings)


def test_a_traced_step_keeps_the_memory_as_eager_calls_do():
    """As `fit` runs it (tf.function with an unknown batch size, or jax.jit with the memory
    carried in and out as state): the same values and the same memory as eager calls."""
    eager, compiled = memory(), memory()
    step = traced(
        lambda labels, embeddings: compiled(labels, embeddings),
        signature=[((None,), "int32"), ((None, 4), "float32")],
        state=compiled.weights,
    )
    for seed in range(3):
        labels, embeddings = batch(seed)
        np.testing.assert_allclose(
            float(step(labels, embeddings)), float(eager(labels, embeddings)), rtol=1e-6
        )
    for name in ("memory_embeddings", "memory_labels", "write_index", "filled", "steps"):
        got, expected = to_numpy(getattr(compiled, name)), to_numpy(getattr(eager, name))
        np.testing.assert_allclose(got, expected, rtol=1e-6, err_msg=name)


@pytest.mark.tf_only("an unknown batch size at trace time is tf.function's")
def test_a_batch_larger_than_the_memory_gives_nan_when_its_size_is_unknown():
    xbm = memory(memory_size=4)
    step = traced(
        lambda labels, embeddings: xbm(labels, embeddings),
        signature=[((None,), "int32"), ((None, 4), "float32")],
    )
    assert np.isnan(float(step(*batch(7))))
