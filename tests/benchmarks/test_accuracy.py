"""`benchmarks.accuracy.run` and `benchmarks.accuracy.ensemble_analysis` end to end on digits
(slow)."""

import contextlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys

import pytest

from tests.support.helpers import benchmark_script
from tests.support.no_tensorflow import run_blocked
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def run(script, *args):
    result = subprocess.run(
        [sys.executable, "-m", f"benchmarks.accuracy.{script}", *args],
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
        "run",
        "--dataset",
        "digits",
        "--rows",
        rows,
        "--seeds",
        "0",
        "--output",
        out,
        "--rerank",
        "aqe,k_reciprocal",
        *budget,
    )
    with open(os.path.join(out, "results.jsonl")) as f:
        records = {r["row"]: r for r in map(json.loads, f)}
    assert set(records) == set(rows.split(","))
    # Each row also records its test embeddings' metrics after each re-ranking.
    reranked = records["baseline/normalized_softmax"]["metrics_rerank"]
    assert sorted(reranked) == ["aqe", "k_reciprocal"]
    for metrics in reranked.values():
        assert 0.0 < metrics["recall@1"] <= 1.0 and 0.0 < metrics["map@r"] <= 1.0
    plain = records["baseline/normalized_softmax"]["metrics"]
    assert reranked["k_reciprocal"]["map@r"] != plain["map@r"]
    # Each record names where it trained (rows also run with JAX / PyTorch on a GPU machine).
    assert records["defaults"]["runtime"] == {"backend": "tensorflow", "device": "cpu"}
    # ... and on which machine, under which load (`records.machine`, as every benchmark record).
    host = records["defaults"]["machine"]
    assert host["cpu"] == benchmark_script("records").cpu_model() != ""
    assert len(host["load_average"]) == 3
    # The defaults row sets nothing but the dataset and epochs: its settings are the library's.
    assert records["defaults"]["settings"]["backbone"] == "vgg_small"
    assert records["defaults"]["settings"]["loss"]["name"] == "normalized_softmax"
    assert records["abe/best"]["settings"]["model"]["num_learners"] == 4
    assert 0.0 < records["baseline/normalized_softmax"]["metrics"]["recall@1"] <= 1.0
    table = run("run", "--output", out, "--table")
    assert "abe/best" in table and "defaults" in table
    assert "k_reciprocal" in table.split("re-ranked test metrics")[1]

    run("ensemble_analysis", "--output", out, "--rows", "baseline/normalized_softmax,abe/best")
    with open(os.path.join(out, "ensemble_analysis.jsonl")) as f:
        analysis = {r["row"]: r for r in map(json.loads, f)}
    # The baseline is cut into 4 equal slices (the control); ABE has its 4 learners.
    assert analysis["baseline/normalized_softmax"]["learners"] == 4
    assert analysis["abe/best"]["learners"] == 4
    assert len(analysis["abe/best"]["learner_recall@1"]) == 4


def accuracy_module():
    return benchmark_script("accuracy.run")


def test_every_accuracy_row_has_a_run_config():
    """Each keras-dml row of the benchmark builds its config; ensembles keep the budget's size."""
    module = accuracy_module()
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
    paper = module.keras_config("hdc/paper", "hangul", budget, "normalized_softmax", seed=0)
    assert paper["method_options"]["freeze_backbone"] is True  # the reference code's setting


def test_method_rows_with_a_named_loss_train_with_the_library_defaults():
    """`hdc/proxy_nca` does not inherit the reference code's frozen backbone of hdc/paper."""
    module = accuracy_module()
    config = module.keras_config("hdc/proxy_nca", "hangul", module.BUDGET, "arcface", seed=0)
    assert config["method_options"] == {"division_every": 1, "freeze_backbone": False}
    assert config["loss"]["name"] == "proxy_nca"


def test_ablation_rows_change_one_setting_and_keep_their_loss():
    """`abe/proxy_nca-early-branch` is `abe/proxy_nca` cut after block1 (ABE's vgg_small cut
    when those rows trained), and the other ablations change one more setting of it, whatever
    the best loss, so the table compares each with the baseline trained with its row's loss.
    `abe/paper-early-branch` keeps the paper's loss and `abe/best-early-branch` the best one."""
    module = accuracy_module()
    early = {"branch_point": "block1", "trunk_end": "block2"}
    for row, plain_row, model, optimizer in (
        ("abe/proxy_nca-early-branch", "abe/proxy_nca", early, {}),
        ("abe/proxy_nca-no-divergence", "abe/proxy_nca", {**early, "lambda_div": 0.0}, {}),
        (
            "abe/proxy_nca-attention-lr10",
            "abe/proxy_nca",
            early,
            {"lr_multipliers": {"attention": 10.0}},
        ),
        ("abe/paper-early-branch", "abe/paper", early, {}),
        ("abe/best-early-branch", "abe/best", early, {}),
    ):
        assert row in module.row_names("arcface")
        plain = module.keras_config(plain_row, "hangul", module.BUDGET, "arcface", seed=0)
        config = module.keras_config(row, "hangul", module.BUDGET, "arcface", seed=0)
        assert "branch_point" not in plain["model"]  # the plain rows train ABE's default cut
        assert config["model"] == {**plain["model"], **model}
        assert config["optimizer"] == {**plain["optimizer"], **optimizer}
        assert config["loss"] == plain["loss"]
        assert config["method_options"] == plain["method_options"]
    paper = module.keras_config("abe/paper-early-branch", "hangul", module.BUDGET, "arcface", 0)
    assert paper["loss"] is None  # ABE's built-in Eq. 10, not the best loss
    best = module.keras_config("abe/best-early-branch", "hangul", module.BUDGET, "arcface", 0)
    assert best["loss"] == {"name": "arcface"}


def test_pretrained_regime_ablations_change_one_setting_of_their_row():
    """The rows that look for why an ensemble trails in the pretrained regime: each
    is its plain row with one setting changed, and the backbone-lr rows slow exactly the budget
    backbone's variables (vgg_small's are named `block...`), on the baseline as on D&C."""
    module = accuracy_module()
    slow_backbone = {"lr_multipliers": {"^block": 0.1}}
    for row, plain_row, part, change in (
        ("dc/best-fixed-clusters", "dc/best", "method_options", {"recluster_every": 3}),
        ("dc/best-2-learners", "dc/best", "model", {"num_learners": 2}),
        ("dc/best-backbone-lr0.1", "dc/best", "optimizer", slow_backbone),
        (
            "baseline/normalized_softmax-backbone-lr0.1",
            "baseline/normalized_softmax",
            "optimizer",
            slow_backbone,
        ),
        ("dcml/best-4-compositors", "dcml/best", "model", {"num_compositors": 4}),
        ("abe/best-no-divergence", "abe/best", "model", {"lambda_div": 0.0}),
    ):
        assert row in module.row_names("normalized_softmax")
        plain = module.keras_config(plain_row, "hangul", module.BUDGET, "normalized_softmax", 0)
        config = module.keras_config(row, "hangul", module.BUDGET, "normalized_softmax", 0)
        assert config[part] == {**plain[part], **change}, row
        assert {k: v for k, v in config.items() if k != part} == {
            k: v for k, v in plain.items() if k != part
        }, row
    import keras_dml.backbones

    backbone = keras_dml.backbones.get(module.BUDGET["backbone"], input_shape=(32, 32, 3))
    paths = [variable.path for variable in backbone.trainable_variables]
    assert paths and all(re.search("^block", path) for path in paths)


def test_a_loss_ablation_row_changes_one_option_of_its_baseline_loss():
    # `baseline/abe_contrastive-separate`: ABE's contrastive loss with PML's reduction (positive
    # and negative pairs averaged apart), everything else the `baseline/abe_contrastive` row's.
    module = accuracy_module()
    row = "baseline/abe_contrastive-separate"
    assert row in module.row_names("normalized_softmax")
    plain = module.keras_config("baseline/abe_contrastive", "hangul", module.BUDGET, None, 0)
    config = module.keras_config(row, "hangul", module.BUDGET, None, 0)
    assert config["loss"] == {**plain["loss"], "balance": "separate"}
    assert "balance" not in plain["loss"]  # the library's default, "joint"
    assert {k: v for k, v in config.items() if k != "loss"} == {
        k: v for k, v in plain.items() if k != "loss"
    }


def test_recorded_rows_name_the_model_their_row_builds_now():
    """A record's model arguments are those its row sets today: when a row's arguments change
    (the ABE rows pinned to the block1 cut), no record keeps its name with the old ones. (A
    library default that moves is not in the arguments; its records are renamed by hand.)"""
    module = accuracy_module()
    for name in (
        "accuracy_hangul",
        "accuracy_kanji",
        "accuracy_hangul_pretrained",
        "accuracy_hangul_pretrained_6_epochs",
        "accuracy_kanji_pretrained",
    ):
        path = os.path.join(ROOT, "benchmarks", "results", f"{name}.jsonl")
        with open(path) as f:
            records = [json.loads(line) for line in f]
        for record in records:
            if "settings" not in record or "model" not in record["settings"]:
                continue  # PML rows and records written before settings were recorded
            if record["row"] == "defaults":
                continue  # fitted to the data by the library, not set by the row
            config = module.keras_config(
                record["row"], record["dataset"], record["budget"], "normalized_softmax", 0
            )
            assert record["settings"]["model"] == config["model"], (name, record["row"])


def test_method_rows_name_the_loss_they_train_with_unless_it_is_the_best():
    module = accuracy_module()
    names = module.row_names("normalized_softmax")
    assert "bier/arcface" in names and "dcml/proxy_anchor" in names
    assert "bier/normalized_softmax" not in names  # that is bier/best
    for row, loss in (("bier/arcface", "arcface"), ("bier/best", "normalized_softmax")):
        config = module.keras_config(row, "hangul", module.BUDGET, "normalized_softmax", seed=0)
        assert config["loss"]["name"] == loss, row
    # With ArcFace as the best loss, bier/best trains ArcFace and bier/normalized_softmax exists.
    assert "bier/normalized_softmax" in module.row_names("arcface")
    config = module.keras_config("dc/best-without-conquer", "hangul", module.BUDGET, "arcface", 0)
    assert config["loss"]["name"] == "arcface"
    # D&C divided once: each keeps its own loss (the paper's margin loss, Proxy-NCA).
    for row, loss in (
        ("dc/paper-fixed-clusters", "margin"),
        ("dc/proxy_nca-fixed-clusters", "proxy_nca"),
    ):
        config = module.keras_config(row, "hangul", module.BUDGET, "arcface", 0)
        assert config["loss"]["name"] == loss, row
        assert config["method_options"]["recluster_every"] == module.BUDGET["epochs"]


def test_table_without_results_names_the_missing_file(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.accuracy.run", "--table"] + ["--output", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "no results at" in result.stderr and "results.jsonl" in result.stderr


def test_a_diverged_run_is_recorded_as_diverged_and_the_next_rows_go_on(tmp_path, monkeypatch):
    # A row whose test embeddings come out NaN (PML's SoftTriple here) is a result of the table:
    # recorded with `diverged`, no metrics; the table says so, and the next row still trains.
    from keras_dml.evaluation import NonFiniteEmbeddingsError

    module = accuracy_module()
    table = benchmark_script("accuracy.table")
    metrics = {"recall@1": 0.5, "map@r": 0.25, "r_precision": 0.3, "nmi": 0.4}

    def fake_run_keras(row, *args, **kwargs):
        if row == "baseline/arcface":
            raise NonFiniteEmbeddingsError("`embeddings` contains NaN or Inf values; check it.")
        return metrics, 2.0, {"loss": {"name": row}}, None

    def failing_run_keras(row, *args, **kwargs):
        raise ValueError("`labels` must be 1-D")

    monkeypatch.setattr(module, "run_keras", fake_run_keras)
    out = str(tmp_path / "acc")
    rows = "baseline/arcface,baseline/cosface"
    module.main(["--dataset", "digits", "--rows", rows, "--seeds", "0", "--output", out])
    path = os.path.join(out, "results.jsonl")
    with open(path) as f:
        diverged, trained = [json.loads(line) for line in f]
    assert diverged["row"] == "baseline/arcface" and "metrics" not in diverged
    assert diverged["diverged"].startswith("`embeddings` contains NaN or Inf")
    assert diverged["budget"] == module.BUDGET and diverged["runtime"]["device"] == "cpu"
    assert trained["row"] == "baseline/cosface" and trained["metrics"] == metrics
    # The tables read the trained runs; the diverged ones apart, by seed.
    assert list(table.read_records(path)) == ["baseline/cosface"]
    assert [r["seed"] for r in table.diverged_runs(path)["baseline/arcface"]] == [0]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        module.main(["--output", out, "--table"])
    assert "baseline/arcface" in printed.getvalue()
    assert "diverged on seed 0: `embeddings` contains NaN" in printed.getvalue()
    # parallel_rows.py --skip-recorded does not train a diverged run again.
    jobs = [("baseline/arcface", 0, ["--dataset", "digits"])]
    assert benchmark_script("accuracy.parallel_rows").unrecorded(jobs, [path]) == []
    # Any other error still fails the run.
    monkeypatch.setattr(module, "run_keras", failing_run_keras)
    with pytest.raises(ValueError, match="must be 1-D"):
        module.main(["--dataset", "digits", "--rows", rows, "--seeds", "1", "--output", out])


def recorded_rows(name):
    """`{table key: [record, ...]}` of `benchmarks/results/NAME`."""
    table_key = accuracy_module().table_key  # `ROW`, or `ROW@pretrained` in that regime
    records = {}
    with open(os.path.join(ROOT, "benchmarks", "results", name)) as f:
        for line in f:
            record = json.loads(line)
            records.setdefault(table_key(record), []).append(record)
    return records


def check_accuracy_table(lines, records):
    """The accuracy-table rows among `lines` are the means of `records`, one row each."""
    table = [line for line in lines if line.startswith("| `") and line.count("|") == 9]
    assert len(table) == len(records), "page accuracy rows and recorded rows differ"
    for line in table:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        row = cells[0].split("`")[1]
        assert row in records, f"page row {row} has no record"
        runs = records[row]
        assert cells[2] == ", ".join(str(r["seed"]) for r in runs), row
        for cell, key in zip(cells[3:7], ("recall@1", "map@r", "r_precision", "nmi")):
            mean = sum(r["metrics"][key] for r in runs) / len(runs)
            assert cell == f"{mean:.3f}", f"{row} {key}: page {cell}, records {mean:.3f}"
        seconds = sum(r["seconds"] for r in runs) / len(runs)
        assert cells[7] == f"{seconds:.0f} s", f"{row} train time: page {cells[7]}"


def test_readme_accuracy_table_matches_the_recorded_runs():
    """Every row of the Benchmarks page's accuracy table (docs/benchmarks.md, built by
    docs/hooks.py) is the mean of its records in benchmarks/results/accuracy_hangul.jsonl
    (seeds, metrics to 3 decimals, train time), and so are the rows of the pretrained regime's
    second backbone (accuracy_hangul_pretrained.jsonl)."""
    from tests.support.docs_site import rendered_markdown

    page = rendered_markdown("docs/benchmarks.md").splitlines()
    # The accuracy table's section only: other tables (e.g. the backend speeds) have rows of
    # the same width. The second backbone's table ends it.
    start = page.index("## Embedding quality against PyTorch + pytorch-metric-learning")
    end = next(i for i in range(start + 1, len(page)) if page[i].startswith("## "))
    second = next(i for i in range(start, end) if "The rows recorded so far:" in page[i])
    check_accuracy_table(page[start:second], recorded_rows("accuracy_hangul.jsonl"))
    check_accuracy_table(page[second:end], recorded_rows("accuracy_hangul_pretrained.jsonl"))


def hangul_options(num_train_classes, pretrain_classes, fonts=2, copies=1):
    """Options of a small hangul benchmark leaving `pretrain_classes` syllables to pretrain on."""
    from keras_dml.data.datasets import glyphs, hangul

    found, _ = glyphs.find_font_files(hangul.DEFAULT_FONTS, hangul.DEFAULT_FONT_DIR)
    if len(found) < fonts:
        pytest.skip(f"needs Hangul fonts: {hangul.INSTALL_COMMAND}")
    test = len(hangul.ks_x_1001_syllables()) - num_train_classes - pretrain_classes
    return {
        "num_train_classes": num_train_classes,
        "num_test_classes": test,
        "fonts": [os.path.basename(f) for f in found[:fonts]],
        "copies": copies,
    }


def test_pretrained_regime_rows_start_from_a_backbone_trained_on_disjoint_classes(
    tmp_path, monkeypatch
):
    import keras
    import numpy as np

    from keras_dml import backbones

    module = accuracy_module()
    monkeypatch.setattr(module, "PRETRAIN", {**module.PRETRAIN, "epochs": 1})
    monkeypatch.setenv("KERAS_DML_DATA_DIR", str(tmp_path / "data"))
    options = hangul_options(num_train_classes=10, pretrain_classes=6)
    budget = {**module.BUDGET, "backbone": "convnet", "batch_size": 8, "m_per_class": 2}
    budget["embedding_dim"] = 16
    path, info = module.pretrained_backbone("hangul", budget, str(tmp_path), options)
    # It trained on the pretrain split: the 6 syllables outside the benchmark's classes.
    assert info["classes"] == 6 and info["images"] == 6 * 2 and info["epochs"] == 1

    size = budget["image_size"]
    pretrained = backbones.get("convnet", weights=path, input_shape=(size, size, 3))
    fresh = backbones.get("convnet", input_shape=(size, size, 3))
    for row in module.row_names("normalized_softmax"):
        if row.startswith("pml/") or row == "defaults":
            continue
        config = module.keras_config(row, "hangul", budget, "normalized_softmax", 0, options, path)
        assert config["backbone"]["weights"] == path, row
    # The file holds trained weights: a backbone built from it differs from a fresh one.
    kernels = [w for w in pretrained.weights if "kernel" in w.path]
    fresh_kernels = [w for w in fresh.weights if "kernel" in w.path]
    assert any(
        not np.allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
        for a, b in zip(kernels, fresh_kernels)
    )
    with pytest.raises(ValueError, match="scratch regime only"):
        module.keras_config("defaults", "hangul", budget, None, 0, options, path)

    # Cached: the same settings load the file instead of training again.
    def fail(*args, **kwargs):
        raise AssertionError("pretrained again")

    import keras_dml.training

    monkeypatch.setattr(keras_dml.training, "train", fail)
    assert module.pretrained_backbone("hangul", budget, str(tmp_path), options)[0] == path


@pytest.mark.slow
def test_pretrained_regime_end_to_end_records_its_rows(tmp_path, monkeypatch):
    out = str(tmp_path / "acc")
    # 6 images per class, so D&C divides the samples (the papers' k-means, no class fallback).
    options = hangul_options(num_train_classes=24, pretrain_classes=8, fonts=3, copies=2)
    # The rendered cache stays in the test's folder.
    monkeypatch.setenv("KERAS_DML_DATA_DIR", str(tmp_path / "data"))
    run(
        "run",
        "--dataset",
        "hangul",
        *[f"--dataset-option={k}={json.dumps(v)}" for k, v in options.items()],
        "--regime",
        "pretrained",
        "--rows",
        "defaults,baseline/normalized_softmax,dc/best,pml/normalized_softmax",
        "--seeds",
        "0",
        "--output",
        out,
        *["--set", "epochs=2", "--set", "batch_size=16", "--set", "backbone=convnet"],
    )
    with open(os.path.join(out, "results.jsonl")) as f:
        records = [json.loads(line) for line in f]
    # defaults runs from scratch only: it is skipped, not recorded. The PML row starts from the
    # same weights, copied into its translated backbone (skipped without torch and PML).
    expected = ["baseline/normalized_softmax", "dc/best"]
    if importlib.util.find_spec("torch") and importlib.util.find_spec("pytorch_metric_learning"):
        expected.append("pml/normalized_softmax")
    assert [r["row"] for r in records] == expected
    assert all(r["regime"] == "pretrained" and r["pretrained"]["classes"] == 8 for r in records)
    table = run("run", "--output", out, "--table")
    assert "dc/best@pretrained" in table


IMAGES_WITHOUT_TENSORFLOW = """
import sys
import numpy as np
import keras_dml.data as data
from tests.support.helpers import benchmark_script

accuracy = benchmark_script("accuracy.run")
rng = np.random.default_rng(0)
images = rng.integers(0, 256, (40, 12, 12), np.uint8)
dataset = data.ImageDataset(np.repeat(np.arange(8), 5), images=images, image_size=12)
served = accuracy._images(dataset, 12)
assert served.shape == (40, 12, 12, 3), served.shape
np.testing.assert_array_equal(served, np.repeat(images[..., None], 3, -1).astype("float32"))
assert accuracy.runtime("baseline/proxy_nca") == {"backend": "jax", "device": "cpu"}
assert "tensorflow" not in sys.modules
print("OK")
"""


def test_pml_rows_read_their_images_and_record_the_runtime_without_tensorflow(tmp_path):
    # The PML rows' images come from the backend's own pipeline, so the benchmark runs on a GPU
    # machine that has JAX and PyTorch but no TensorFlow; each record names its backend.
    result = run_blocked(tmp_path, "jax", IMAGES_WITHOUT_TENSORFLOW, cwd=ROOT)
    assert result.returncode == 0 and "OK" in result.stdout, result.stderr[-3000:]
