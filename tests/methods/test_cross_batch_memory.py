"""Cross-batch memory trains every method, keeps one memory per loss call site and resumes.

The run configuration's `{"name": "cross_batch_memory", "loss": {...}, "memory_size": M}` goes
through the same hooks as `keras_dml.training.train` (`tests/methods/test_any_loss.py`); the
memory is part of the model's weights, so `.keras` files and an interrupted run carry it.
"""

import numpy as np
import pytest

from keras_dml import losses
from tests.methods.test_any_loss import METHOD_MODELS, build_and_fit, splits  # noqa: F401
from tests.methods.test_resume_exact import (
    CrashError,
    assert_same_run,
    finished_run,
    interrupt,
    kill_switch,
)
from tests.support.backend_utils import to_numpy
from tests.support.helpers import roundtrip, tiny_images, tiny_labels
from tests.support.resume_script import CONFIG, train_run

XBM = {"name": "cross_batch_memory", "loss": {"name": "contrastive"}, "memory_size": 64}
# The loss call sites of each method, one memory each (see `loss_memory_keys`).
MEMORIES = {"baseline": 1, "dc": 3, "hdc": 3, "bier": 3, "abe": 2, "mheads": 2}


def memory_layers(model):
    return [layer for layer in model._flatten_layers() if losses.is_memory_loss(layer)]


@pytest.mark.parametrize("method_name", sorted(METHOD_MODELS))
def test_every_method_trains_with_cross_batch_memory(method_name, splits):  # noqa: F811
    model, history, _ = build_and_fit(method_name, XBM, splits)
    assert np.isfinite(history.history["loss"]).all(), history.history
    layers = memory_layers(model)
    if method_name == "dcml":  # J_dis on the whole output, J_T one memory per composite
        assert [layer.num_memories for layer in layers] == [1, 3]
    else:
        # A method not pinned here keeps one memory per loss call site it declares.
        expected = MEMORIES.get(method_name, model.loss_memory_keys)
        assert [layer.num_memories for layer in layers] == [expected]
    filled = np.concatenate([to_numpy(layer.filled) for layer in layers])
    assert filled.sum() >= 32  # both batches of 16 were enqueued (D&C: one per learner)


def test_dc_learner_memories_hold_only_their_clusters_batches(splits):  # noqa: F811
    model, _, _ = build_and_fit("dc", XBM, splits, steps=1)
    (xbm,) = memory_layers(model)
    xbm.reset_memory()
    model.set_stage("divide")
    images, labels = tiny_images(16), tiny_labels(16)
    y = {"labels": labels, "clusters": np.ones(16, "int32")}
    model.compute_loss(y=y, y_pred=model(images, training=True), training=True)
    # Key 0 is the whole embedding, 1 + k learner k: a cluster-1 batch fills learner 1's only
    # (the whole embedding's loss is evaluated too, and discarded without an update).
    np.testing.assert_array_equal(to_numpy(xbm.filled), [0, 0, 16])
    learner_1 = to_numpy(model.learner_embeddings(images, training=True)[1])
    stored = to_numpy(xbm.memory_embeddings)[2, :16]
    np.testing.assert_array_equal(stored[:, learner_1.shape[1] :], 0.0)  # 8-d slice, zero-padded


def test_the_memory_survives_a_keras_round_trip(splits):  # noqa: F811
    model, _, _ = build_and_fit("baseline", XBM, splits)
    (saved,) = memory_layers(model)
    (loaded,) = memory_layers(roundtrip(model))
    for name in ("memory_embeddings", "memory_labels", "write_index", "filled", "steps"):
        np.testing.assert_array_equal(
            to_numpy(getattr(saved, name)), to_numpy(getattr(loaded, name))
        )
    assert loaded.get_config() == saved.get_config()


@pytest.mark.slow  # three tiny D&C runs: 38 s on TensorFlow, 150 s on JAX (2 shared cores)
def test_a_run_with_cross_batch_memory_resumes_exactly(tmp_path):
    """D&C (divide then conquer) with XBM, interrupted mid-epoch: the resumed run restores the
    memories with the weights and ends exactly as the uninterrupted one."""
    options = {**CONFIG["method_options"], "recluster_every": 1, "epoch_length": 3}
    options["conquer_epoch"] = None
    config = {**CONFIG, "epochs": 2, "eval_every": 2, "method_options": options, "loss": XBM}
    train_run(str(tmp_path / "uninterrupted"), config)
    with pytest.raises(CrashError):
        train_run(str(tmp_path / "run"), config, kill_switch("1:1", interrupt))
    train_run(str(tmp_path / "run"), config)
    assert_same_run(finished_run(tmp_path / "run"), finished_run(tmp_path / "uninterrupted"))


def test_too_few_memories_for_the_call_sites_are_refused(splits):  # noqa: F811
    model, _, _ = build_and_fit("dc", {"name": "margin"}, splits, steps=1)
    one_memory = losses.get({**XBM, "embedding_dim": model.embedding_dim})
    with pytest.raises(ValueError, match="num_memories=3") as error:
        model.compile(optimizer="adam", loss=one_memory)
    assert "\n" not in str(error.value)


def test_the_cli_flags_reach_the_loss():
    from keras_dml.methods.defaults import build_loss
    from keras_dml_cli.parser import build_parser
    from keras_dml_cli.run.train import config_from_args

    argv = ["train", "--method", "dc", "--dataset", "digits", "--loss", "cross_batch_memory"]
    argv += ["--set", "loss.loss.name=contrastive", "--set", "loss.memory_size=256"]
    config = config_from_args(build_parser().parse_args([*argv, "--output", "x"]))
    assert config["loss"] == XBM | {"memory_size": 256}
    xbm = build_loss(config, embedding_dim=16, num_memories=3)
    assert (xbm.memory_size, xbm.embedding_dim, xbm.num_memories) == (256, 16, 3)
    assert xbm.inner_loss.get_config()["margin"] == 1.0
