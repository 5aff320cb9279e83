"""An interrupted `keras-dml train` resumes with everything kept.

The run is killed (SIGKILL) after its second epoch and the same command is run again. Before the
fix, `best.keras` was overwritten by the first epoch after the resume whatever its score (the
checkpoint forgot its best value) and `history.json` held only the epochs after the resume.
"""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

EPOCHS = 4


def command(output):
    return [
        sys.executable,
        "-m",
        "keras_dml_cli",
        "train",
        "--method",
        "dc",
        "--dataset",
        "digits",
        "--epochs",
        str(EPOCHS),
        "--set",
        "method_options.recluster_every=1",
        "--output",
        str(output),
        "--quiet",
    ]


def epochs_written(output):
    try:
        with open(os.path.join(output, "history.json")) as f:
            return len(json.load(f).get("epoch", []))
    except (OSError, ValueError):
        return 0


def tensorboard_epoch_steps(output):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    steps = []
    for path in glob.glob(os.path.join(output, "logs", "train", "events.*")):
        accumulator = EventAccumulator(path)
        accumulator.Reload()
        tags = accumulator.Tags().get("tensors", []) + accumulator.Tags().get("scalars", [])
        if "epoch_loss" in tags:
            events = (
                accumulator.Tensors("epoch_loss")
                if "epoch_loss" in accumulator.Tags().get("tensors", [])
                else accumulator.Scalars("epoch_loss")
            )
            steps += [event.step for event in events]
    return sorted(steps)


@pytest.mark.slow
def test_killed_run_resumes_with_best_value_history_tensorboard_and_state(tmp_path):
    output = tmp_path / "run"
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    process = subprocess.Popen(command(output), env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 600
    while epochs_written(output) < 2 and process.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, process.stderr.read()
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (output / "model.keras").exists()
    before = json.loads((output / "history.json").read_text())
    best_before = json.loads((output / "best.keras.json").read_text())
    assert os.listdir(output / "state")

    finished = subprocess.run(command(output), env=env, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr

    history = json.loads((output / "history.json").read_text())
    assert history["epoch"] == list(range(EPOCHS))
    # Epochs finished before the kill are kept as they were.
    completed = len(before["epoch"])
    assert history["val_map@r"][: min(completed, 2)] == before["val_map@r"][: min(completed, 2)]
    best = json.loads((output / "best.keras.json").read_text())
    scores = history["val_map@r"]
    assert best["value"] == pytest.approx(max(scores))
    assert best["epoch"] == scores.index(max(scores))
    assert best["value"] >= best_before["value"]
    assert tensorboard_epoch_steps(str(output)) == list(range(EPOCHS))
    # The reported training time counts the epochs the killed run finished, not only the
    # resumed run's (each epoch's own time is at most its share of the fit it ran in).
    metrics = json.loads((output / "metrics.json").read_text())
    assert metrics["train_seconds"] >= sum(history["epoch_seconds"])
    assert history["epoch_seconds"][:completed] == before["epoch_seconds"][:completed]
    # The method's state: D&C's division count (a model variable restored by the backup) goes on
    # from where the killed run stopped instead of starting again at 1. Every epoch re-clusters
    # (or logs that its k-means found no valid division and kept the previous one: 4 classes
    # in 2 clusters of 2 or more classes each do not always come out), one saved assignment per
    # division.
    # The default conquer stage ("auto") merges in the last epoch, which does not divide.
    assert history["dc_conquer"] == [0.0] * (EPOCHS - 1) + [1.0]
    failed = history.get("dc_division_failed", [None] * EPOCHS)
    divided = list(zip(history["dc_division"], failed))[: EPOCHS - 1]
    assert all((d is None) != (f is None) for d, f in divided)
    assert history["dc_division"][-1] is None and failed[-1] is None
    divisions = [d for d in history["dc_division"] if d is not None]
    assert divisions == [float(n) for n in range(1, len(divisions) + 1)]
    saved = glob.glob(os.path.join(output, "state", "division_*.npz"))
    assert len(saved) == len(divisions)
