"""`benchmarks/accuracy.py` and `benchmarks/ensemble_analysis.py` end to end on digits (slow)."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(script, *args):
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_accuracy_rows_record_their_settings_and_the_analysis_cuts_learners(tmp_path):
    out = str(tmp_path / "acc")
    rows = "defaults,baseline/normalized_softmax,abe/best"
    budget = ["--set", "epochs=1", "--set", "batch_size=16", "--set", "backbone=convnet"]
    run(
        "accuracy.py",
        "--dataset",
        "digits",
        "--rows",
        rows,
        "--seeds",
        "0",
        "--output",
        out,
        *budget,
    )
    with open(os.path.join(out, "results.jsonl")) as f:
        records = {r["row"]: r for r in map(json.loads, f)}
    assert set(records) == set(rows.split(","))
    # The defaults row sets nothing but the dataset and epochs: its settings are the library's.
    assert records["defaults"]["settings"]["backbone"] == "vgg_small"
    assert records["defaults"]["settings"]["loss"]["name"] == "normalized_softmax"
    assert records["abe/best"]["settings"]["model"]["num_learners"] == 4
    assert 0.0 < records["baseline/normalized_softmax"]["metrics"]["recall@1"] <= 1.0
    table = run("accuracy.py", "--output", out, "--table")
    assert "abe/best" in table and "defaults" in table

    run("ensemble_analysis.py", "--output", out, "--rows", "baseline/normalized_softmax,abe/best")
    with open(os.path.join(out, "ensemble_analysis.jsonl")) as f:
        analysis = {r["row"]: r for r in map(json.loads, f)}
    # The baseline is cut into 4 equal slices (the control); ABE has its 4 learners.
    assert analysis["baseline/normalized_softmax"]["learners"] == 4
    assert analysis["abe/best"]["learners"] == 4
    assert len(analysis["abe/best"]["learner_recall@1"]) == 4


def test_every_accuracy_row_has_a_run_config():
    """Each keras-dml row of the benchmark builds its config; ensembles keep the budget's size."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "accuracy_benchmark", os.path.join(ROOT, "benchmarks", "accuracy.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    budget = module.BUDGET
    for row in module.row_names("normalized_softmax"):
        if row.startswith("pml/"):
            continue
        config = module.keras_config(row, "hangul", budget, "normalized_softmax", seed=0)
        model = config.get("model", {})
        if row.startswith("dcml/"):
            assert model["learner_dim"] * model["num_learners"] == budget["embedding_dim"]
        elif row != "defaults":
            assert model["embedding_dim"] == budget["embedding_dim"], row
        if row in ("dc/paper", "dc/best"):  # the paper's Algorithm 1 ends with the conquer stage
            assert config["method_options"]["conquer_epoch"] == budget["epochs"] - 1
    ablated = module.keras_config(
        "dc/best-without-conquer", "hangul", budget, "normalized_softmax", seed=0
    )
    assert ablated["method_options"]["conquer_epoch"] is None
    unfrozen = module.keras_config(
        "hdc/best-unfrozen", "hangul", budget, "normalized_softmax", seed=0
    )
    assert unfrozen["method_options"] == {"division_every": 1, "freeze_backbone": False}
    frozen = module.keras_config("hdc/best", "hangul", budget, "normalized_softmax", seed=0)
    assert frozen["method_options"]["freeze_backbone"] is True  # as hdc/best was recorded


def test_table_without_results_names_the_missing_file(tmp_path):
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", "accuracy.py"), "--table"]
        + ["--output", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "no results at" in result.stderr and "results.jsonl" in result.stderr


def test_readme_accuracy_table_matches_the_recorded_runs():
    """Every row of the README's accuracy table is the mean of its records in
    benchmarks/results/accuracy_hangul.jsonl (seeds, metrics to 3 decimals, train time)."""
    records = {}
    with open(os.path.join(ROOT, "benchmarks", "results", "accuracy_hangul.jsonl")) as f:
        for line in f:
            record = json.loads(line)
            records.setdefault(record["row"], []).append(record)
    with open(os.path.join(ROOT, "README.md")) as f:
        table = [line for line in f if line.startswith("| `") and line.count("|") == 8]
    assert len(table) == len(records), "README accuracy rows and recorded rows differ"
    for line in table:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        row = cells[0].split("`")[1]
        assert row in records, f"README row {row} has no record"
        runs = records[row]
        assert cells[1] == ", ".join(str(r["seed"]) for r in runs), row
        for cell, key in zip(cells[2:6], ("recall@1", "map@r", "r_precision", "nmi")):
            mean = sum(r["metrics"][key] for r in runs) / len(runs)
            assert cell == f"{mean:.3f}", f"{row} {key}: README {cell}, records {mean:.3f}"
        seconds = sum(r["seconds"] for r in runs) / len(runs)
        assert cells[6] == f"{seconds:.0f} s", f"{row} train time: README {cells[6]}"
