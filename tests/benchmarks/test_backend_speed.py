"""benchmarks/speed/backend_speed.py: every method's training images/s on each backend.

The worker trains one row on this process's backend (TensorFlow here) at a tiny size and prints
its timings; the parent's table and record are checked on timings given to it, since each real
worker is a process of its own backend (tests/methods/test_backends.py trains on JAX and
PyTorch).
"""

import json
import os

import numpy as np
import pytest

from tests.support.docs_site import load_hooks
from tests.support.helpers import benchmark_script

TINY = ["--dataset", "digits", "--set", "batch_size=32", "--set", "m_per_class=8"]
TINY += ["--set", "image_size=16", "--set", "backbone=convnet"]


def test_the_worker_times_two_epochs_and_the_input_pipeline(tmp_path, capsys):
    script = benchmark_script("speed.backend_speed")
    script.main([*TINY, "--output", str(tmp_path), "--worker", "tensorflow", "baseline/margin"])
    output = capsys.readouterr().out.splitlines()
    (line,) = [x for x in output if x.startswith(script.RESULT_PREFIX)]
    result = json.loads(line[len(script.RESULT_PREFIX) :])
    assert result["row"] == "baseline/margin" and result["batch_size"] == 32
    assert result["steps_per_epoch"] > 1
    for name in ("pipeline", "first_epoch", "steady", "epoch2"):
        assert result[name] > 0, name


def test_the_worker_starts_afresh_where_an_interrupted_run_left_its_backup(
    tmp_path, monkeypatch, capsys
):
    # `train` resumes a folder holding an interrupted run's backup: the worker must still train
    # (and time) two epochs there, not the epoch left over (a stopped benchmark left such folders).
    script = benchmark_script("speed.backend_speed")
    timer = script.epoch_timer

    def interrupted_after_one_epoch(base):
        callback = timer(base)

        def stop(epoch, logs=None):  # runs after BackupAndRestore saved epoch 0
            raise RuntimeError("interrupted")

        callback.on_epoch_end = stop
        return callback

    argv = [*TINY, "--output", str(tmp_path), "--worker", "tensorflow", "baseline/margin"]
    monkeypatch.setattr(script, "epoch_timer", interrupted_after_one_epoch)
    with pytest.raises(RuntimeError, match="interrupted"):
        script.main(argv)
    assert os.listdir(tmp_path / "tensorflow" / "baseline_margin" / "backup")
    capsys.readouterr()
    monkeypatch.setattr(script, "epoch_timer", timer)
    script.main(argv)
    (line,) = [
        x for x in capsys.readouterr().out.splitlines() if x.startswith(script.RESULT_PREFIX)
    ]
    assert json.loads(line[len(script.RESULT_PREFIX) :])["steps_per_epoch"] > 1


def test_timer_rates_come_from_the_step_times():
    script = benchmark_script("speed.backend_speed")
    timer = script.epoch_timer(object)
    timer.epochs = [
        {"begin": 0.0, "steps": [10.0, 11.0, 12.0]},  # compilation in the first step
        {"begin": 12.5, "steps": [14.0, 14.5, 15.0]},
    ]
    rates = timer.rates(batch_size=4)
    assert rates["first_epoch"] == pytest.approx(12 / 12.0)
    assert rates["steady"] == pytest.approx(8 / 1.0)
    assert rates["epoch2"] == pytest.approx(12 / 3.0)


def test_the_record_gives_each_backend_against_tensorflow(tmp_path, monkeypatch):
    script = benchmark_script("speed.backend_speed")
    steady = {"tensorflow": 100.0, "jax": 90.0, "torch": 40.0}

    def fake_run_one(args, backend, row):
        return {"row": row, "pipeline": 500.0, "steady": steady[backend]}

    monkeypatch.setattr(script, "run_one", fake_run_one)
    record_path = tmp_path / "record.json"
    script.main([*TINY, "--rows", "baseline/margin", "--record", str(record_path)])
    record = json.loads(record_path.read_text())
    assert record["measured"]["baseline/margin"]["jax"]["steady"] == 90.0
    jax_row, torch_row = record["rows"]
    assert jax_row["what"] == "training images/s, jax / TensorFlow, baseline/margin"
    assert jax_row["result"] == "0.90x" and torch_row["result"] == "0.40x"
    assert jax_row["target"].startswith(">= 0.83x")


def test_keep_rows_measures_one_row_again_and_keeps_the_others(tmp_path, monkeypatch):
    script = benchmark_script("speed.backend_speed")
    steady = {"tensorflow": 100.0, "jax": 90.0}

    def fake_run_one(args, backend, row):
        return {"row": row, "pipeline": 500.0, "steady": steady[backend]}

    monkeypatch.setattr(script, "run_one", fake_run_one)
    record_path = tmp_path / "record.json"
    common = [*TINY, "--backends", "tensorflow", "jax", "--record", str(record_path)]
    script.main([*common, "--rows", "dc/paper", "baseline/margin"])
    steady["jax"] = 45.0
    script.main([*common, "--rows", "baseline/margin", "--keep-rows"])
    record = json.loads(record_path.read_text())
    assert list(record["measured"]) == ["baseline/margin", "dc/paper"]  # the script's row order
    assert record["measured"]["baseline/margin"]["jax"]["steady"] == 45.0
    assert record["measured"]["dc/paper"]["jax"]["steady"] == 90.0
    assert len(record["commands"]) == 2 and record["commands"][1].endswith("--keep-rows")
    # Without --keep-rows the record holds this run's rows only.
    script.main([*common, "--rows", "baseline/margin"])
    assert list(json.loads(record_path.read_text())["measured"]) == ["baseline/margin"]
    with pytest.raises(SystemExit, match="classes"):
        script.main([*common, "--rows", "dc/paper", "--keep-rows", "--classes", "3"])
    only_tensorflow = [*TINY, "--backends", "tensorflow", "--record", str(record_path)]
    with pytest.raises(SystemExit, match="backends"):
        script.main([*only_tensorflow, "--rows", "dc/paper", "--keep-rows"])


def test_synthetic_splits_fill_whole_batches_of_m_images_per_class():
    script = benchmark_script("speed.backend_speed")
    budget = {"image_size": 8, "batch_size": 6, "m_per_class": 3}
    splits = script.synthetic_splits(budget, steps=4)
    train = splits["train"]
    assert len(train) == 24 and train.num_classes == 8
    assert (np.bincount(train.labels) == 3).all()
    assert len(splits["val"]) == len(splits["test"]) == 12


def test_the_onednn_variant_runs_jax_with_the_xla_flag(monkeypatch):
    script = benchmark_script("speed.backend_speed")
    calls = []

    def fake_run(command, env, capture_output, text):
        calls.append((command, env))
        line = script.RESULT_PREFIX + json.dumps({"row": "baseline/margin", "steady": 1.0})
        return type("Done", (), {"returncode": 0, "stdout": line, "stderr": ""})()

    monkeypatch.setattr(script.subprocess, "run", fake_run)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    args = script.build_parser().parse_args(TINY)
    script.run_one(args, "jax+onednn", "baseline/margin")
    script.run_one(args, "jax", "baseline/margin")
    (onednn_command, onednn_env), (_, plain_env) = calls
    assert onednn_env["KERAS_BACKEND"] == "jax" and plain_env["KERAS_BACKEND"] == "jax"
    assert onednn_env["XLA_FLAGS"] == "--xla_cpu_use_onednn=true"
    assert "XLA_FLAGS" not in plain_env
    assert onednn_command[onednn_command.index("--worker") + 1] == "jax+onednn"


def test_the_site_table_gives_each_backend_and_its_ratio_to_tensorflow(tmp_path):
    record = {
        "command": "python -m benchmarks.speed.backend_speed --dataset hangul",
        "date": "2026-11-27 09:00 UTC",
        "machine": {"cores": 2, "memory_gib": 23.5, "load_average": [1.0, 1.0, 1.0]},
        "measured": {
            "baseline/margin": {"tensorflow": {"steady": 50.0}, "jax": {"steady": 40.0}},
            "dc/paper": {"tensorflow": {"steady": 20.0}, "jax": {"steady": 25.0}},
        },
    }
    (tmp_path / "backend_speed.json").write_text(json.dumps(record))
    table = load_hooks().backend_speed_table(str(tmp_path))
    lines = table.splitlines()
    assert lines[0] == "| row | tensorflow images/s | jax images/s | jax / tensorflow |"
    assert lines[2] == "| `baseline/margin` | 50.0 | 40.0 | 0.80x |"
    assert lines[3] == "| `dc/paper` | 20.0 | 25.0 | 1.25x |"
    assert "2 cores, 23.5 GiB, no GPU, load average 1.0" in table
    assert "`python -m benchmarks.speed.backend_speed --dataset hangul`" in table
