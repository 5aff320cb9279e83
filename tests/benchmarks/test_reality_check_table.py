"""`benchmarks.accuracy.reality_check_table`: keras-dml against PML per loss, XBM, re-ranking."""

import json
import subprocess
import sys

import pytest

from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def table():
    return benchmark_script("accuracy.reality_check_table")


def record(row, seed, recall, map_at_r, rerank=None):
    found = {
        "row": row,
        "seed": seed,
        "settings": {},
        "metrics": {"recall@1": recall, "map@r": map_at_r, "r_precision": 0.5, "nmi": 0.5},
        "seconds": 1.0,
    }
    if rerank is not None:
        found["metrics_rerank"] = rerank
    return found


def rows_of(records):
    rows = {}
    for r in records:
        rows.setdefault(r["row"], []).append(r)
    return rows


def entry(rows, loss):
    return next(e for e in table().loss_rows(rows) if e["loss"] == loss)


def test_keras_dml_and_pml_are_compared_on_their_shared_seeds_only():
    rows = rows_of(
        [
            record("baseline/ntxent", 0, 0.90, 0.50),
            record("baseline/ntxent", 1, 0.80, 0.40),
            record("pml/ntxent", 0, 0.70, 0.30),
        ]
    )
    found = entry(rows, "ntxent")
    assert found["seeds"] == [0]
    assert found["keras_dml"]["recall@1"] == pytest.approx(0.90)  # seed 1 left out
    assert found["pml"]["recall@1"] == pytest.approx(0.70)
    line = next(x for x in table().format_table(rows) if x.startswith("ntxent "))
    assert "+0.200" in line and "+0.200" in line.split("+0.200", 1)[1]  # R@1 and MAP@R


def test_without_a_shared_seed_no_difference_is_taken():
    rows = rows_of([record("baseline/supcon", 0, 0.9, 0.5), record("pml/supcon", 1, 0.7, 0.3)])
    line = next(x for x in table().format_table(rows) if x.startswith("supcon "))
    assert "+0.200" not in line and "-0.200" not in line


def test_xbm_rows_are_set_against_the_same_loss_without_memory():
    rows = rows_of(
        [
            record("baseline/contrastive", 0, 0.90, 0.60),
            record("baseline/contrastive", 1, 0.92, 0.62),
            record("baseline/contrastive+xbm", 0, 0.95, 0.70),
            record("baseline/contrastive+xbm", 1, 0.93, 0.66),
        ]
    )
    found = entry(rows, "contrastive")
    assert found["xbm_seeds"] == [0, 1]
    assert found["xbm"]["recall@1"] - found["no_xbm"]["recall@1"] == pytest.approx(0.03)
    assert found["xbm"]["map@r"] - found["no_xbm"]["map@r"] == pytest.approx(0.07)
    assert "contrastive+xbm" not in table().loss_families()


def test_the_re_ranking_block_uses_the_best_row_with_re_ranked_metrics():
    aqe = {"aqe": {"recall@1": 0.99, "map@r": 0.80}}
    rows = rows_of(
        [
            record("baseline/arcface", 0, 0.95, 0.70, rerank=aqe),
            record("baseline/cosface", 0, 0.90, 0.60, rerank=aqe),
            record("baseline/margin", 0, 0.97, 0.60),  # best R@1 but not re-ranked
        ]
    )
    rows["baseline/arcface"].append(record("baseline/arcface", 1, 0.5, 0.5))  # not re-ranked
    best, seeds, results = table().rerank_rows(rows)
    assert best == "baseline/arcface" and seeds == [0]  # only its re-ranked records count
    assert dict(results)["aqe"]["recall@1"] == pytest.approx(0.99)
    text = "\n".join(table().format_table(rows, markdown=True))
    assert "| aqe | 0.990 | +0.040 | 0.800 | +0.100 |" in text


def test_the_command_prints_the_recorded_table(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(record("baseline/margin", 0, 0.5, 0.25)) + "\n")
    output = subprocess.run(
        [sys.executable, "-m", "benchmarks.accuracy.reality_check_table", str(path), "--markdown"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "| margin | 0.500 | - |" in output


def test_a_row_measured_again_replaces_its_record_of_that_seed(tmp_path):
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    earlier = (record("baseline/margin", 0, 0.5, 0.2), record("baseline/margin", 1, 0.7, 0.4))
    old.write_text("\n".join(json.dumps(r) for r in earlier))
    new.write_text(json.dumps(record("baseline/margin", 0, 0.9, 0.6)))
    rows = table().latest_per_seed([str(old), str(new)])
    assert sorted((r["seed"], r["metrics"]["recall@1"]) for r in rows["baseline/margin"]) == [
        (0, 0.9),
        (1, 0.7),
    ]


def line_of(lines, loss):
    """The cells of `loss`'s markdown line (index 1 is the loss)."""
    line = next(x for x in lines if x.startswith(f"| {loss} |"))
    return [cell.strip() for cell in line.split("|")]


def test_a_loss_without_a_pml_row_says_so_and_a_diverged_row_says_diverged(tmp_path):
    path = tmp_path / "results.jsonl"
    trained = [record("baseline/binomial_deviance", 0, 0.9, 0.5)]
    trained += [record("baseline/soft_triple", seed, 0.9, 0.6) for seed in (0, 1)]
    diverged = [{"row": "pml/soft_triple", "seed": seed, "diverged": "NaN"} for seed in (0, 1)]
    path.write_text("\n".join(json.dumps(r) for r in trained + diverged))
    module = table()
    rows, gone = module.latest_per_seed([str(path)]), module.diverged_seeds([str(path)])
    assert gone == {"pml/soft_triple": [0, 1]} and "pml/soft_triple" not in rows
    lines = module.format_table(rows, markdown=True, diverged=gone)
    # binomial deviance: no PML row (PML has no such loss); cosface: a PML row not yet run.
    assert line_of(lines, "binomial_deviance")[2:5] == ["0.900", "n/a", "-"]
    assert line_of(lines, "cosface")[2:5] == ["-", "-", "-"]
    assert line_of(lines, "soft_triple")[2:5] == ["0.900", "diverged", "-"]


def test_a_later_trained_record_replaces_a_diverged_one_of_that_seed(tmp_path):
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    old.write_text(json.dumps({"row": "pml/circle", "seed": 0, "diverged": "NaN"}))
    new.write_text(json.dumps(record("pml/circle", 0, 0.8, 0.4)))
    module = table()
    assert module.diverged_seeds([str(old), str(new)]) == {}
    assert [r["seed"] for r in module.latest_per_seed([str(old), str(new)])["pml/circle"]] == [0]
    assert module.diverged_seeds([str(new), str(old)]) == {"pml/circle": [0]}


def test_an_xbm_difference_across_runtimes_is_marked_and_the_runtimes_are_counted():
    gpu = {"backend": "jax", "device": "NVIDIA H200"}
    rows = rows_of(
        [
            record("baseline/contrastive", 0, 0.90, 0.60),  # no runtime: TensorFlow on CPU
            record("baseline/contrastive+xbm", 0, 0.95, 0.70),
            record("baseline/supcon", 0, 0.90, 0.60),
            record("baseline/supcon+xbm", 0, 0.95, 0.70),
            record("pml/supcon", 0, 0.9, 0.6),  # no runtime: PyTorch on CPU
            record("baseline/arcface-ablation", 0, 0.9, 0.6),  # not a row of this table
        ]
    )
    rows["baseline/contrastive+xbm"][0]["runtime"] = gpu
    module = table()
    lines = module.format_table(rows, markdown=True)
    assert line_of(lines, "contrastive")[10:13] == ["+0.050*", "0.700", "+0.100*"]
    assert line_of(lines, "supcon")[10:13] == ["+0.050", "0.700", "+0.100"]
    assert module.runtime_table(rows) == [
        ("tensorflow, cpu", {0: 3}),
        ("jax, NVIDIA H200", {0: 1}),
        ("pytorch, cpu", {0: 1}),
    ]
    assert "| jax, NVIDIA H200 | 1 |" in lines


def test_a_pml_difference_of_another_definition_is_marked():
    rows = rows_of(
        [
            record("baseline/triplet", 0, 0.9, 0.6),
            record("pml/triplet", 0, 0.8, 0.5),
            record("baseline/supcon", 0, 0.9, 0.6),
            record("pml/supcon", 0, 0.8, 0.5),
        ]
    )
    lines = table().format_table(rows, markdown=True)
    assert line_of(lines, "triplet")[4] == "+0.100†" and line_of(lines, "triplet")[7] == "+0.100†"
    assert line_of(lines, "supcon")[4] == "+0.100" and line_of(lines, "supcon")[7] == "+0.100"
    assert any(line.startswith("† PML's loss of that name is defined otherwise") for line in lines)
