"""`benchmarks/accuracy/table.py`: each row's signed difference from the baseline with its loss."""

import json
import os
import subprocess
import sys

import pytest

from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def table_module():
    return benchmark_script("accuracy.table")


def record(row, seed, recall, map_at_r, loss=None, regime=None, recipe=None):
    settings = {"recipe": recipe} if recipe else {"loss": loss}
    found = {
        "row": row,
        "seed": seed,
        "settings": settings,
        "metrics": {"recall@1": recall, "map@r": map_at_r, "r_precision": 0.5, "nmi": 0.5},
        "seconds": 1.0,
    }
    if regime:
        found["regime"] = regime
    return found


SOFTMAX = {"name": "normalized_softmax"}
MARGIN = {"name": "margin", "beta": 1.2, "margin": 0.2, "sampling": "distance_weighted"}


def rows_of(records):
    rows = {}
    for r in records:
        rows.setdefault(table_module().table_key(r), []).append(r)
    return rows


def test_difference_is_row_minus_the_baseline_with_the_same_loss_on_shared_seeds():
    rows = rows_of(
        [
            record("baseline/normalized_softmax", 0, 0.90, 0.60, SOFTMAX),
            record("baseline/normalized_softmax", 1, 0.80, 0.40, SOFTMAX),
            # Fitted to the data (num_classes): still the same loss.
            record("baseline/margin", 0, 0.50, 0.20, {**MARGIN, "num_classes": 7}),
            record("bier/best", 1, 0.85, 0.30, {**SOFTMAX, "num_classes": 7}),
            record("bier/best", 2, 0.99, 0.99, SOFTMAX),  # no baseline seed 2: left out
            record("dc/paper", 0, 0.40, 0.30, MARGIN),
        ]
    )
    found = {e["row"]: e for e in table_module().differences_from_baseline(rows)}
    assert set(found) == {"bier/best", "dc/paper"}  # baselines are not compared with themselves
    bier = found["bier/best"]
    assert bier["baseline"] == "baseline/normalized_softmax" and bier["seeds"] == [1]
    assert bier["recall@1"] == pytest.approx(0.05) and bier["map@r"] == pytest.approx(-0.10)
    dc = found["dc/paper"]
    assert dc["baseline"] == "baseline/margin"
    assert dc["recall@1"] == pytest.approx(-0.10) and dc["map@r"] == pytest.approx(0.10)


def test_the_spread_is_the_per_seed_difference_on_each_shared_seed():
    """The seed spread pairs seed with seed: a row ahead on both seeds shows a positive range
    even when its worse seed trails the baseline's better one."""
    module = table_module()
    rows = rows_of(
        [
            record("baseline/normalized_softmax", 0, 0.90, 0.60, SOFTMAX),
            record("baseline/normalized_softmax", 1, 0.80, 0.40, SOFTMAX),
            record("mheads/best", 1, 0.81, 0.43, SOFTMAX),
            record("mheads/best", 0, 0.92, 0.61, SOFTMAX),  # recorded out of seed order
            record("mheads/best", 2, 0.99, 0.99, SOFTMAX),  # no baseline seed 2
            record("abe/best", 0, 0.85, 0.50, SOFTMAX),
        ]
    )
    found = {e["row"]: e for e in module.differences_from_baseline(rows)}
    mheads = found["mheads/best"]
    assert mheads["by_seed"]["map@r"] == pytest.approx([0.01, 0.03])
    assert mheads["by_seed"]["recall@1"] == pytest.approx([0.02, 0.01])
    assert module.signed_spread(mheads, "map@r") == "+0.020 (+0.010 to +0.030)"
    assert module.signed_spread(found["abe/best"], "map@r") == "-0.100"


def test_no_baseline_is_claimed_for_another_loss_regime_or_an_unrecorded_loss():
    other_margin = {**MARGIN, "margin": 0.1}
    rows = rows_of(
        [
            record("baseline/margin", 0, 0.9, 0.6, MARGIN),
            record("baseline/normalized_softmax", 0, 0.9, 0.6, SOFTMAX, regime="pretrained"),
            record("dc/paper", 0, 0.8, 0.5, other_margin),  # same name, other options
            record("dc/best", 0, 0.8, 0.5, SOFTMAX),  # its baseline is in another regime
            {**record("abe/best", 0, 0.8, 0.5), "settings": None},
            record("mheads/best", 0, 0.8, 0.5, SOFTMAX),
            record("mheads/best", 1, 0.8, 0.5, MARGIN),  # seeds disagree on the loss
            record("pml/margin", 0, 0.7, 0.4, recipe="margin"),
        ]
    )
    rows["abe/best"][0].pop("settings")  # a record older than the settings field
    found = {e["row"]: e for e in table_module().differences_from_baseline(rows)}
    for row in ("dc/paper", "dc/best", "abe/best", "mheads/best"):
        assert found[row]["baseline"] is None, row
    # PML's recipe is the baseline's family of the same name.
    assert found["pml/margin"]["baseline"] == "baseline/margin"
    assert found["pml/margin"]["recall@1"] == pytest.approx(-0.2)


def test_a_row_without_a_loss_entry_is_compared_with_the_baseline_of_its_built_in_loss():
    """ABE and M-heads train Eq. 10 when no loss is set: their paper rows pair with the
    baseline trained with it; BIER's boosted loss has no baseline."""
    abe_loss = benchmark_script("accuracy.rows").LOSSES["abe_contrastive"]
    rows = rows_of(
        [
            record("baseline/abe_contrastive", 0, 0.90, 0.60, abe_loss),
            record("baseline/contrastive", 0, 0.70, 0.50, {"name": "contrastive"}),
            record("mheads/paper", 0, 0.95, 0.65),  # loss None: the model's Eq. 10
            record("abe/paper", 0, 0.80, 0.55),
            record("bier/paper", 0, 0.80, 0.55),
        ]
    )
    found = {e["row"]: e for e in table_module().differences_from_baseline(rows)}
    for row, recall in (("mheads/paper", 0.05), ("abe/paper", -0.10)):
        assert found[row]["baseline"] == "baseline/abe_contrastive", row
        assert found[row]["recall@1"] == pytest.approx(recall), row
    assert found["bier/paper"]["baseline"] is None


def test_table_prints_the_signed_differences(tmp_path):
    with open(tmp_path / "results.jsonl", "w") as f:
        for r in (
            record("baseline/normalized_softmax", 0, 0.90, 0.60, SOFTMAX),
            record("mheads/best", 0, 0.92, 0.55, SOFTMAX),
            record("abe/paper", 0, 0.5, 0.5, {"name": "contrastive"}),
        ):
            f.write(json.dumps(r) + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.accuracy.run", "--table"] + ["--output", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    line = next(x for x in lines if x.startswith("mheads/best") and "baseline/" in x)
    assert line.split()[2:4] == ["+0.020", "-0.050"]
    assert any(x.startswith("abe/paper") and "no baseline row" in x for x in lines)


def test_readme_difference_table_matches_the_recorded_runs():
    """The Benchmarks page's table of differences from the baseline (docs/benchmarks.md, built by
    docs/hooks.py; rows of 5 cells whose first two are row names) is `differences_from_baseline`
    of benchmarks/results/accuracy_hangul.jsonl: every compared row, its baseline, the shared
    seeds and both signed differences to 3 decimals, with their per-seed range."""
    module = table_module()
    rows = module.read_records(os.path.join(ROOT, "benchmarks", "results", "accuracy_hangul.jsonl"))
    expected = {
        e["row"]: e for e in module.differences_from_baseline(rows) if e["baseline"] is not None
    }
    from tests.support.docs_site import rendered_markdown

    page = rendered_markdown("docs/benchmarks.md").splitlines()
    # Up to the tables of the other records files (the second pretrained backbone, kanji).
    page = page[: next(i for i, line in enumerate(page) if "The rows recorded so far:" in line)]
    table = [
        line for line in page if line.startswith("| `") and line.count("|") == 6 and "| `b" in line
    ]
    assert len(table) == len(expected), "page difference rows and recorded rows differ"
    for line in table:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        row, baseline = cells[0].split("`")[1], cells[1].split("`")[1]
        entry = expected[row]
        assert baseline == entry["baseline"], row
        assert cells[2] == ", ".join(map(str, entry["seeds"])), row
        assert cells[3] == module.signed_spread(entry, "recall@1"), f"{row} R@1: page {cells[3]}"
        assert cells[4] == module.signed_spread(entry, "map@r"), f"{row} MAP@R: page {cells[4]}"


def test_train_time_names_a_runtime_other_than_the_cpu_and_never_averages_two():
    """Records from a GPU machine (`runtime`) keep their own time; CPU and GPU seeds of one row
    give no mean time (a CPU record written before `runtime` existed has none)."""
    module = table_module()
    cpu = [record("baseline/supcon", seed, 0.9, 0.5, SOFTMAX) for seed in (0, 1)]
    cpu[1]["seconds"] = 3.0
    gpu = {**record("baseline/supcon", 2, 0.9, 0.5, SOFTMAX), "seconds": 40.0}
    gpu["runtime"] = {"backend": "jax", "device": "NVIDIA H100 80GB HBM3"}
    assert module.train_time(cpu) == "2 s"
    assert module.train_time([gpu]) == "40 s (jax, NVIDIA H100 80GB HBM3)"
    assert module.train_time([*cpu, gpu]) == "mixed runtimes"
    explicit = {**cpu[0], "runtime": {"backend": "tensorflow", "device": "cpu"}}
    assert module.train_time([explicit, cpu[1]]) == "2 s"
    # A PML record kept before runtimes were trained with PyTorch on the same CPU machine: it
    # and a later PML record that names that runtime are one runtime, not "mixed".
    old_pml = record("pml/supcon", 0, 0.9, 0.5, SOFTMAX)
    new_pml = {**record("pml/supcon", 1, 0.9, 0.5, SOFTMAX), "seconds": 5.0}
    new_pml["runtime"] = {"backend": "pytorch", "device": "cpu"}
    assert module.record_runtime(old_pml) == {"backend": "pytorch", "device": "cpu"}
    assert module.train_time([old_pml, new_pml]) == "3 s"


def test_pretrained_rows_pair_only_with_a_baseline_fine_tuned_from_the_same_weights():
    module = table_module()

    def pretrained(row, seed, recall, sha=None):
        found = record(row, seed, recall, 0.5, SOFTMAX, regime="pretrained")
        found["pretrained"] = {"digest": "d", **({"sha256": sha} if sha else {})}
        return found

    records = [
        pretrained("baseline/normalized_softmax", 0, 0.90),  # the first backbone (no sha)
        pretrained("baseline/normalized_softmax", 0, 0.80, sha="b"),  # trained again
        pretrained("baseline/normalized_softmax", 1, 0.70, sha="b"),
        pretrained("abe/best", 0, 0.85, sha="b"),
        pretrained("dc/best", 0, 0.95),
    ]
    found = {e["row"]: e for e in module.differences_from_baseline(rows_of(records))}
    assert found["abe/best@pretrained"]["seeds"] == [0]
    assert found["abe/best@pretrained"]["recall@1"] == pytest.approx(0.85 - 0.80)
    assert found["dc/best@pretrained"]["recall@1"] == pytest.approx(0.95 - 0.90)


def test_a_row_pairs_with_the_baseline_fine_tuned_with_its_own_optimizer_settings():
    slow_backbone = {"name": "adam", "learning_rate": 1e-3, "lr_multipliers": {"^block": 0.1}}
    plain = {"name": "adam", "learning_rate": 1e-3}

    def with_optimizer(found, optimizer):
        found["settings"]["optimizer"] = optimizer
        return found

    # The plain baseline is listed first: order alone would pair both rows with it.
    rows = rows_of(
        [
            with_optimizer(record("baseline/normalized_softmax", 0, 0.9, 0.6, SOFTMAX), plain),
            with_optimizer(
                record("baseline/normalized_softmax-backbone-lr0.1", 0, 0.8, 0.5, SOFTMAX),
                slow_backbone,
            ),
            with_optimizer(record("dc/best-backbone-lr0.1", 0, 0.8, 0.45, SOFTMAX), slow_backbone),
            with_optimizer(record("dc/best", 0, 0.9, 0.5, SOFTMAX), plain),
        ]
    )
    found = {e["row"]: e for e in table_module().differences_from_baseline(rows)}
    slowed = found["dc/best-backbone-lr0.1"]
    assert slowed["baseline"] == "baseline/normalized_softmax-backbone-lr0.1"
    assert slowed["map@r"] == pytest.approx(-0.05)
    assert found["dc/best"]["baseline"] == "baseline/normalized_softmax"
    # A row whose optimizer no baseline shares still has the baseline with its loss.
    rows["abe/best-attention-lr10"] = [
        with_optimizer(record("abe/best-attention-lr10", 0, 0.9, 0.7, SOFTMAX), {"name": "sgd"})
    ]
    found = {e["row"]: e for e in table_module().differences_from_baseline(rows)}
    assert found["abe/best-attention-lr10"]["baseline"] is not None
