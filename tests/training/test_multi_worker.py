"""Two worker processes on 127.0.0.1 train with `strategy="multi_worker"`.

Each worker gets its own `TF_CONFIG` (free ports, worker 0 the chief) and runs
`tests/support/multi_worker_script.py`: the baseline and D&C train, stop after their first epoch
(the chief's backup written) and resume with the same command. Only the chief writes the run folder;
the other worker's files go to a temporary folder that is gone afterwards. The divisions of D&C
and hierarchical D&C (k-means, HDC's splits) are computed on the chief and received by the other
worker, so both train on the same assignment with the same learners.
Every process runs under a time limit: a hang fails the test with the workers' output.
"""

import json
import os
import socket
import subprocess
import sys

import pytest

from tests.support.ci_rotation import rotating
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
SCRIPT = os.path.join(ROOT, "tests", "support", "multi_worker_script.py")
TIMEOUT = 420  # seconds per two-process run (start-up, 1-2 epochs, evaluation)


def free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_workers(method, tmp_path, epochs, stop_after):
    """Runs both workers to the end; returns their stdout. Fails with their output otherwise."""
    ports = free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
    processes = []
    for index in range(2):
        env = {
            **os.environ,
            "PYTHONPATH": ROOT,
            "CUDA_VISIBLE_DEVICES": "",
            "TF_CPP_MIN_LOG_LEVEL": "3",
            "TF_CONFIG": json.dumps(
                {"cluster": cluster, "task": {"type": "worker", "index": index}}
            ),
        }
        argv = [
            sys.executable,
            SCRIPT,
            method,
            str(tmp_path / "run"),
            str(tmp_path / f"state_{index}"),
            str(tmp_path / f"record_{index}.jsonl"),
            str(epochs),
            str(stop_after),
        ]
        processes.append(
            subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    outputs, failed = [], False
    for process in processes:
        try:
            out, err = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            for other in processes:
                other.kill()
            out, err = process.communicate()
            failed = True
        outputs.append((process.returncode, out, err))
        failed = failed or process.returncode != 0
    if failed:
        report = "\n".join(
            f"--- worker {i} (exit {rc})\n{out[-2000:]}\n{err[-4000:]}"
            for i, (rc, out, err) in enumerate(outputs)
        )
        pytest.fail(f"multi-worker {method} run failed or timed out after {TIMEOUT} s:\n{report}")
    return [out for _, out, _ in outputs]


def records(tmp_path, index):
    with open(tmp_path / f"record_{index}.jsonl") as f:
        return [json.loads(line) for line in f]


@pytest.mark.slow
@pytest.mark.parametrize("method", rotating(["baseline", "dc", "hdc"]))
def test_two_workers_train_checkpoint_on_the_chief_and_resume(method, tmp_path):
    first = run_workers(method, tmp_path, epochs=2, stop_after=0)
    assert all("INTERRUPTED" in out for out in first)
    run = tmp_path / "run"
    assert (run / "backup").is_dir() and os.listdir(run / "backup")  # the chief's checkpoint

    second = run_workers(method, tmp_path, epochs=2, stop_after=-1)
    chief, other = (out.split("WROTE ")[1].split("\n")[0] for out in second)
    assert chief == str(run)
    assert other != chief and not os.path.exists(other)  # the non-chief's scratch folder
    assert {"model.keras", "best.keras", "history.json", "metrics.json"} <= set(os.listdir(run))
    with open(run / "history.json") as f:
        assert json.load(f)["epoch"] == [0, 1]  # epoch 0 before the interruption, 1 after
    for index in range(2):  # each worker resumed at epoch 1 and ran it once
        assert [entry["epoch"] for entry in records(tmp_path, index)] == [0, 1]
    chief_records, other_records = records(tmp_path, 0), records(tmp_path, 1)
    for a, b in zip(chief_records, other_records):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-6)  # one global batch per step
    if method in ("dc", "hdc"):
        # D&C divides at every epoch (recluster_every=1); HDC from epoch 1 on (after the resume),
        # splitting its one learner in two.
        expected = {"dc": [1, 2], "hdc": [0, 1]}[method]
        assert [entry["division"] for entry in chief_records] == expected
        if method == "hdc":
            assert [entry["learners"] for entry in chief_records] == [1, 2]
        for a, b in zip(chief_records, other_records):
            assert a["division"] == b["division"]
            assert a.get("learners") == b.get("learners")  # HDC: the same split
            assert a["assignment_sha256"] == b["assignment_sha256"]
            if a["recluster_seconds"] < 0:  # no division in this epoch
                assert b["recluster_seconds"] < 0
                continue
            assert a["recluster_seconds"] > 0.0  # the chief embedded and clustered
            assert b["recluster_seconds"] == 0.0  # the other worker received the assignment
