"""A division empties the learners' cross-batch memories (D&C and hierarchical D&C).

A learner's memory holds its own cluster's batches only (`loss_memory_keys`); after a division
gives the learners other clusters, entries of the old clusters would be kept as that learner's
references. `DivisionModel.reset_learner_memories` (called by both division callbacks) empties
keys 1..K and keeps the whole embedding's memory (key 0) and every warm-up counter.
"""

import numpy as np
import pytest

from keras_dml import losses
from tests.methods.test_any_loss import build_and_fit, splits  # noqa: F401
from tests.support.backend_utils import to_numpy
from tests.support.helpers import tiny_images, tiny_labels

XBM = {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 64}


def memory_of(model):
    (memory,) = [layer for layer in model._flatten_layers() if losses.is_memory_loss(layer)]
    return memory


def fill_every_memory(model, memory):
    """One batch into each of the 3 memories: the whole embedding (0), learners 1 and 2."""
    memory.reset_memory(restart_warmup=False)  # what the short fit stored
    images, labels = tiny_images(16), tiny_labels(16)
    for key in range(memory.num_memories):
        memory(labels, model(images, training=True), memory=key)
    assert to_numpy(memory.filled).tolist() == [16, 16, 16]


@pytest.mark.parametrize("method_name", ["dc", "hdc"])
def test_a_division_empties_the_learner_memories_only(method_name, splits):  # noqa: F811
    model, _, _, callbacks = build_and_fit(method_name, XBM, splits, steps=1, with_callbacks=True)
    (division,) = [c for c in callbacks if hasattr(c, "divide")]
    memory = memory_of(model)
    fill_every_memory(model, memory)
    whole = to_numpy(memory.memory_embeddings)[0].copy()
    steps = to_numpy(memory.steps).copy()

    division.divide(epoch=1)

    assert to_numpy(memory.filled).tolist() == [16, 0, 0]
    assert (to_numpy(memory.memory_labels)[1:] == -1).all()
    np.testing.assert_array_equal(to_numpy(memory.memory_embeddings)[1:], 0.0)
    np.testing.assert_array_equal(to_numpy(memory.memory_embeddings)[0], whole)
    np.testing.assert_array_equal(to_numpy(memory.steps), steps)  # no new warm-up


def test_reset_memory_empties_the_keys_it_names_and_refuses_others():
    memory = losses.CrossBatchMemory({"name": "contrastive"}, 8, 4, num_memories=3)
    labels = np.array([0, 0, 1, 1])
    vectors = np.eye(4, dtype="float32")
    for key in range(3):
        memory(labels, vectors, memory=key)
    memory.reset_memory(keys=[2], restart_warmup=False)
    assert to_numpy(memory.filled).tolist() == [4, 4, 0]
    assert to_numpy(memory.steps).tolist() == [1, 1, 1]
    memory.reset_memory(keys=[0])
    assert to_numpy(memory.filled).tolist() == [0, 4, 0]
    assert to_numpy(memory.steps).tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match=r"Memory keys must be in \[0, 3\)"):
        memory.reset_memory(keys=[3])
