"""A killed and resumed run ends exactly where an uninterrupted run with the same seed ends.

Once, a Divide & Conquer run killed and resumed continued from the right epoch, but ended with
other results than the uninterrupted run (digits: test MAP@R 0.333 against 0.393), because the
sampler's generator, the augmentation seeds and the loss's `SeedGenerator` started over in the new
process. Here `tests/support/resume_script.py` trains a tiny D&C run (divisions at epochs 0 and 2,
conquer stage at epoch 3) in a subprocess that SIGKILLs itself at a chosen batch; the same command
then resumes it. Its final weights, test metrics and per-epoch history must equal the uninterrupted
run's. Those subprocess runs take a minute or more each, so they are `slow`; the default suite runs
a shorter in-process form (an exception for the kill). Backend-agnostic: `KERAS_BACKEND=jax` runs
the same code on JAX."""

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from tests.support.paths import REPO_ROOT, SUPPORT_DIR
from tests.support.resume_script import CONFIG, kill_switch, train_run

SCRIPT = os.path.join(SUPPORT_DIR, "resume_script.py")


def run_script(output, kill_at=None, method="dc"):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    env.pop("KERAS_DML_TEST_KILL_AT", None)
    if kill_at:
        env["KERAS_DML_TEST_KILL_AT"] = kill_at
    root = REPO_ROOT
    env["PYTHONPATH"] = os.pathsep.join([root, env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, SCRIPT, str(output), method], env=env, capture_output=True, text=True
    )


def finished_run(output):
    """The run's final weights, test metrics and history (everything but timings)."""
    with np.load(output / "weights.npz") as saved:
        weights = [saved[f"arr_{i}"] for i in range(len(saved.files))]
    metrics = json.loads((output / "metrics.json").read_text())
    metrics.pop("train_seconds")
    history = json.loads((output / "history.json").read_text())
    history = {k: v for k, v in history.items() if not k.endswith("seconds")}
    return weights, metrics, history


def killed_and_resumed(output, kill_at, method="dc"):
    killed = run_script(output, kill_at, method)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not (output / "weights.npz").exists()
    resumed = run_script(output, method=method)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    return finished_run(output)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    output = tmp_path_factory.mktemp("uninterrupted")
    result = run_script(output)
    assert result.returncode == 0, result.stderr[-3000:]
    return finished_run(output)


def assert_same_run(resumed, uninterrupted):
    weights, metrics, history = resumed
    expected_weights, expected_metrics, expected_history = uninterrupted
    assert history == expected_history
    assert metrics == expected_metrics
    assert len(weights) == len(expected_weights)
    for got, expected in zip(weights, expected_weights):
        np.testing.assert_array_equal(got, expected)


class CrashError(Exception):
    """Stands for the crash in the in-process test."""


def interrupt():
    raise CrashError()


@pytest.mark.backend_semantics
def test_run_interrupted_in_process_resumes_exactly(tmp_path):
    # The default suite's short form: 2 epochs of 3 batches (divisions at epochs 0 and 1), the
    # crash an exception after 1 batch of epoch 1, the resume a new model, sampler, pipeline
    # and loss (each starting its random state afresh, as a new process would) in this process.
    options = {**CONFIG["method_options"], "recluster_every": 1, "epoch_length": 3}
    options["conquer_epoch"] = None
    config = {**CONFIG, "epochs": 2, "eval_every": 2, "method_options": options}
    train_run(str(tmp_path / "uninterrupted"), config)
    with pytest.raises(CrashError):
        train_run(str(tmp_path / "run"), config, kill_switch("1:1", interrupt))
    assert not (tmp_path / "run" / "weights.npz").exists()
    train_run(str(tmp_path / "run"), config)
    assert_same_run(finished_run(tmp_path / "run"), finished_run(tmp_path / "uninterrupted"))


@pytest.mark.slow
@pytest.mark.ci_every_run  # also .ci/run's JAX turn, which would otherwise take it 1 run in 6
def test_run_killed_mid_epoch_after_a_division_resumes_exactly(tmp_path, uninterrupted):
    # Epoch 2 re-divides at its start; the kill comes after 3 of its 5 batches.
    assert_same_run(killed_and_resumed(tmp_path / "run", "2:3"), uninterrupted)


@pytest.mark.slow
def test_run_killed_again_after_each_resume_ends_exactly(tmp_path, uninterrupted):
    # One run killed three times, each resume killed at the next point: mid-epoch between
    # divisions (1:2), right after the second division before any of its batches (2:0), and in
    # the conquer stage (3:2); the fourth process finishes it. Four processes test the three
    # resumes that six (a kill and a resume per point) would.
    output = tmp_path / "run"
    for kill_at in ("1:2", "2:0", "3:2"):
        killed = run_script(output, kill_at)
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr[-3000:])
        assert not (output / "weights.npz").exists()
    resumed = run_script(output)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_same_run(finished_run(output), uninterrupted)


@pytest.mark.slow
def test_hierarchical_run_killed_after_a_division_resumes_exactly(tmp_path):
    # Hierarchical D&C: learners split at epoch 1, re-clustered at epoch 2 (the kill, after 2
    # batches), fine-tuned at epoch 3; its division state lives in model variables.
    uninterrupted = tmp_path / "uninterrupted"
    result = run_script(uninterrupted, method="hdc")
    assert result.returncode == 0, result.stderr[-3000:]
    resumed = killed_and_resumed(tmp_path / "run", "2:2", method="hdc")
    assert_same_run(resumed, finished_run(uninterrupted))
