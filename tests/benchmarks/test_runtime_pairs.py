"""`benchmarks.accuracy.runtime_pairs`: one row and seed trained on two runtimes, side by side."""

import json
import subprocess
import sys

import pytest

from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

GPU = {"backend": "jax", "device": "NVIDIA H200"}


def record(row, seed, recall, map_at_r, runtime=None):
    found = {"row": row, "seed": seed, "metrics": {"recall@1": recall, "map@r": map_at_r}}
    return found if runtime is None else {**found, "runtime": runtime}


def rows_of(records):
    rows = {}
    for r in records:
        rows.setdefault(r["row"], []).append(r)
    return rows


def test_a_row_and_seed_on_another_runtime_is_paired_with_the_table_record():
    module = benchmark_script("accuracy.runtime_pairs")
    table = rows_of(
        [
            record("baseline/margin+xbm", 0, 0.90, 0.40),  # no runtime: TensorFlow on CPU
            record("baseline/margin+xbm", 1, 0.88, 0.30),
            record("baseline/circle+xbm", 0, 0.95, 0.70, GPU),
        ]
    )
    second = rows_of(
        [
            record("baseline/margin+xbm", 0, 0.91, 0.45, GPU),
            record("baseline/circle+xbm", 0, 0.94, 0.60, GPU),  # same runtime: not a pair
            record("baseline/supcon+xbm", 0, 0.9, 0.5, GPU),  # not in the table: not a pair
        ]
    )
    pairs = module.runtime_pairs(table, second)
    assert [(p["row"], p["seed"]) for p in pairs] == [("baseline/margin+xbm", 0)]
    assert pairs[0]["runtimes"] == ("tensorflow, cpu", "jax, NVIDIA H200")
    assert pairs[0]["map@r"]["values"] == (0.40, 0.45)
    assert pairs[0]["map@r"]["difference"] == pytest.approx(0.05)
    assert pairs[0]["recall@1"]["difference"] == pytest.approx(0.01)
    runtime, seeds, count, rows = module.summary(table, pairs, "map@r")
    assert (runtime, seeds, count) == (pytest.approx(0.05), pytest.approx(0.10), 1)
    assert rows == ["baseline/margin+xbm"]
    lines = module.format_table(table, pairs, markdown=True)
    assert (
        "| baseline/margin+xbm | 0 | tensorflow, cpu | 0.400 | jax, NVIDIA H200 | 0.450 |"
        in lines[2]
    )
    assert lines[-1] == (
        "Mean |MAP@R difference| between runtimes: 0.050 over 1 pairs; between seeds 0 and 1 "
        "of the same rows on one runtime: 0.100."
    )


def test_the_seed_spread_uses_only_rows_whose_two_seeds_share_a_runtime():
    module = benchmark_script("accuracy.runtime_pairs")
    table = rows_of(
        [
            record("a", 0, 0.9, 0.40),
            record("a", 1, 0.9, 0.30, GPU),  # seeds on two runtimes: left out
            record("b", 0, 0.9, 0.50),
            record("b", 1, 0.9, 0.56),
        ]
    )
    assert module.seed_spread(table, ["a", "b"], "map@r") == pytest.approx(0.06)
    assert module.seed_spread(table, ["a"], "map@r") is None


def test_the_command_prints_the_pairs(tmp_path):
    table, second = tmp_path / "table.jsonl", tmp_path / "second.jsonl"
    row = "baseline/margin+xbm"
    table.write_text(json.dumps({**record(row, 0, 0.9, 0.4), "budget": {}}))
    second.write_text(json.dumps({**record(row, 0, 0.9, 0.5, GPU), "budget": {}}))
    output = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.accuracy.runtime_pairs",
            str(second),
            str(table),
            "--markdown",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| +0.100 | +0.000 |" in output
    assert "0.100 over 1 pairs" in output
