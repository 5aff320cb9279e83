"""Every benchmark script the docs quote writes its JSON record, and the site's speed and recipes
tables are built from those records (issue 30, item 1: no number typed by hand).

Each script runs at its smallest settings into a temporary folder (`--record`); the record must
name the script, the command that reproduces it and the machine, hold the measured values, and
format its speed-table rows from those values. The scripts that build and train several models
(seconds each, even tiny) run in one slow test; the evaluation scripts and `train_step.py` run
in the default suite, as does the check that every script's `--record` defaults to the file the
site reads. The hook then prefers a script's record over the rows copied into `speed.json` before
the scripts wrote records, and says under the table which rows come from where.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.support.docs_site import load_hooks
from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
RESULTS = os.path.join(ROOT, "benchmarks", "results")


def run_script(name, arguments, tmp_path):
    """Runs `benchmarks/<name>.py ARGUMENTS --record TMP` in this process; returns its record."""
    path = str(tmp_path / f"{name}.json")
    argv = [*arguments, "--record", path]
    benchmark_script(name).main(argv)
    return checked_record(path, name, argv)


def run_in_process_of_its_own(name, arguments, tmp_path):
    """`run_script` in a new Python process: for scripts that configure TensorFlow's devices
    or threads, which only a process that has not started TensorFlow can do."""
    path = str(tmp_path / f"{name}.json")
    argv = [*arguments, "--record", path]
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", f"{name}.py"), *argv],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    return checked_record(path, name, argv)


def checked_record(path, name, argv):
    """The record at `path`, checked for what every record holds."""
    with open(path) as f:
        record = json.load(f)
    assert record["script"] == f"benchmarks/{name}.py"
    assert record["command"] == " ".join(["python", f"benchmarks/{name}.py", *argv])
    machine = record["machine"]
    assert machine["cores"] == os.cpu_count() and machine["memory_gib"] > 0
    assert len(machine["load_average"]) == 3 and "keras" in machine
    for row in record.get("rows", []):
        assert set(row) == {"what", "result", "target"} if "method" not in row else True
    return record


def test_train_step_records_its_ratio(tmp_path):
    record = run_script(
        "train_step",
        ["--image-size", "32", "--batch-size", "8", "--m-per-class", "2"]
        + ["--warmup", "1", "--rounds", "1", "--steps", "1"],
        tmp_path,
    )
    measured = record["measured"]
    medians = measured["median_step_seconds"]
    assert measured["ratio"] == pytest.approx(medians["embedding_model"] / medians["classifier"])
    (row,) = record["rows"]
    assert row["result"] == f"{measured['ratio']:.3f}x"
    assert row["what"].startswith("`EmbeddingModel` vs plain classifier step (convnet 32 px")


def check_bier_records_both_ratios(tmp_path):
    record = run_script(
        "bier",
        ["--image-size", "32", "--batch-size", "8", "--embedding-dim", "48"]
        + ["--warmup", "1", "--rounds", "1", "--steps", "1"],
        tmp_path,
    )
    ratios = record["measured"]["ratios"]
    assert ratios["baseline"] == 1.0
    assert record["rows"][0]["result"] == f"{ratios['bier']:.3f}x / {ratios['a-bier']:.3f}x"


def check_dcml_records_wall_and_cpu_ratios(tmp_path):
    record = run_script(
        "dcml",
        ["--image-size", "32", "--batch-size", "8", "--num-learners", "2", "--learner-dim", "8"]
        + ["--num-compositors", "2", "--warmup", "1", "--rounds", "1", "--steps", "1"],
        tmp_path,
    )
    measured = record["measured"]
    (wall, cpu), (base_wall, base_cpu) = (
        measured["rounds_wall_cpu_seconds"]["dcml"][0],
        (measured["rounds_wall_cpu_seconds"]["baseline"][0]),
    )
    assert measured["wall_ratio"] == pytest.approx(wall / base_wall)
    assert measured["cpu_ratio"] == pytest.approx(cpu / base_cpu)
    assert record["rows"][0]["result"] == (
        f"{measured['wall_ratio']:.3f}x (CPU time {measured['cpu_ratio']:.3f}x)"
    )


def check_divide_and_conquer_records_step_ratio_and_reclustering(tmp_path):
    record = run_script(
        "divide_and_conquer",
        ["--epochs", "2", "--learners", "2", "--every", "1", "--steps-per-epoch", "3"],
        tmp_path,
    )
    measured = record["measured"]
    assert measured["step_ratio"] == pytest.approx(
        measured["dc_epoch_seconds"] / measured["baseline_epoch_seconds"]
    )
    step, recluster = record["rows"]
    assert step["result"].startswith(f"{measured['step_ratio']:.2f}x")
    assert recluster["result"].startswith(f"{measured['recluster_share_amortised']:.1%}")
    assert measured["embed_seconds"] > 0


def check_abe_records_counts_per_size(tmp_path):
    record = run_script(
        "abe",
        ["--sizes", "32", "--learners", "2", "--embedding-dim", "16", "--batch-size", "4"]
        + ["--steps", "1", "--warmup", "1"],
        tmp_path,
    )
    models = record["measured"]["32"]
    assert [m["model"] for m in models] == ["1-head", "2-heads", "ABE-1", "ABE-2"]
    assert all(m["params"] > 0 and m["macs"] > 0 for m in models)
    (row,) = record["rows"]
    abe2 = models[-1]
    assert (
        f"ABE-2 {abe2['params'] / 1e7:.2f} x 10^7 / {abe2['macs'] / 1e9:.2f} x 10^9"
        in (row["result"])
    )


def test_evaluation_records_time_memory_and_the_naive_difference(tmp_path):
    record = run_script("evaluation", ["--num-samples", "600"], tmp_path)
    measured = record["measured"]
    assert measured["max_retrieval_difference"] < 1e-6
    assert measured["metrics"]["recall@1"] == measured["naive_metrics"]["recall@1"]
    (row,) = record["rows"]
    assert row["result"].startswith(f"{measured['seconds']:.1f} s")
    assert row["what"].startswith("evaluation, 600 x 128, 112 classes")


def test_evaluation_scale_records_exact_and_approximate_rows(tmp_path):
    record = run_script(
        "evaluation_scale", ["--num-samples", "2000", "--approximate", "ivf"], tmp_path
    )
    measured = record["measured"]
    exact, ivf = record["rows"]
    ratio = measured["exact"]["seconds"] / measured["bound"]["seconds"]
    assert exact["result"].startswith(f"{measured['exact']['seconds']:.1f} s = {ratio:.2f}x")
    recall = measured["approximate"]["ivf"]["report"]["approx_neighbor_recall"]
    assert f"neighbour recall {recall:.2f}" in ivf["result"]
    assert ivf["what"] == "faiss ivf (defaults) on the run above"


def check_inference_records_throughput_latency_and_parity(tmp_path):
    argv = ["--image-size", "32", "--learners", "1", "--batch-size", "2"]
    record = run_in_process_of_its_own(
        "inference",
        argv + ["--latency-runs", "2", "--throughput-runs", "1", "--warmup", "1"],
        tmp_path,
    )
    measured = record["measured"]
    rates = measured["throughput_images_per_second"]
    assert measured["throughput_ratio_onnxruntime_to_saved_model"] == pytest.approx(
        rates["onnxruntime"] / rates["tf_saved_model"]
    )
    assert measured["max_abs_difference_to_keras"]["onnxruntime"] < 1e-3
    (row,) = record["rows"]
    assert row["result"].startswith(
        f"{measured['throughput_ratio_onnxruntime_to_saved_model']:.2f}x"
    )


def check_distributed_step_records_both_medians(tmp_path):
    argv = ["--methods", "baseline", "--steps", "2", "--repeats", "1", "--batch-size", "8"]
    record = run_in_process_of_its_own("distributed_step", argv, tmp_path)
    medians = record["measured"]["median_step"]["baseline"]
    one, two = medians["one_device_seconds"], medians["two_replicas_seconds"]
    assert (
        f"baseline {1e3 * one:.0f} / {1e3 * two:.0f} ms ({two / one:.2f}x)"
        in (record["rows"][0]["result"])
    )


def check_recipes_writes_the_record_its_table_is_built_from(tmp_path):
    path = str(tmp_path / "recipes_digits.json")
    argv = ["--dataset", "digits", "--methods", "baseline", "--output", str(tmp_path / "runs")]
    argv += ["--set", "epochs=1", "--record", path]
    rows = benchmark_script("recipes").main(argv)
    record = checked_record(path, "recipes", argv)
    assert record["dataset"] == "digits" and record["rows"] == rows
    hooks = load_hooks()
    table = hooks.recipes_table("digits", str(tmp_path)).splitlines()
    assert table[2].startswith(f"| baseline | {rows[0]['recall@1']:.4f} |")
    provenance = hooks.recipes_provenance("digits", str(tmp_path))
    assert f"written by `{record['command']}` on {record['date']}" in provenance


@pytest.mark.slow
@pytest.mark.tf_only("inference.py times a TF SavedModel; distributed_step.py a MirroredStrategy")
def test_the_training_scripts_write_their_records_at_tiny_size(tmp_path_factory):
    checks = [
        check_bier_records_both_ratios,
        check_dcml_records_wall_and_cpu_ratios,
        check_divide_and_conquer_records_step_ratio_and_reclustering,
        check_abe_records_counts_per_size,
        check_inference_records_throughput_latency_and_parity,
        check_distributed_step_records_both_medians,
        check_recipes_writes_the_record_its_table_is_built_from,
    ]
    for check in checks:
        check(tmp_path_factory.mktemp(check.__name__[len("check_") :]))


SPEED_SCRIPTS = ["evaluation", "train_step", "divide_and_conquer", "abe", "bier", "dcml"]
SPEED_SCRIPTS += ["inference", "distributed_step"]


@pytest.mark.parametrize("name", SPEED_SCRIPTS)
def test_every_speed_script_records_into_the_file_the_site_reads_by_default(name):
    default = benchmark_script(name).build_parser().get_default("record")
    assert default == os.path.join(RESULTS, f"speed_{name}.json")
    assert load_hooks().record_name(f"python benchmarks/{name}.py --x 1") == f"speed_{name}.json"


def test_evaluation_scale_and_recipes_default_to_one_record_per_size_and_dataset():
    hooks = load_hooks()
    command = "python benchmarks/evaluation_scale.py --num-samples 50000 --tile-size 16384"
    assert hooks.record_name(command) == "speed_evaluation_scale_50000.json"
    default = "python benchmarks/evaluation_scale.py"
    assert hooks.record_name(default) == "speed_evaluation_scale_1000000.json"
    assert benchmark_script("evaluation_scale").build_parser().get_default("num_samples") == (
        1_000_000
    )
    assert set(hooks.SPEED_SCRIPTS) == {*SPEED_SCRIPTS, "evaluation_scale"}


def test_a_record_replaces_the_copied_rows_of_its_command_and_says_so(tmp_path):
    shutil.copy(os.path.join(RESULTS, "speed.json"), tmp_path / "speed.json")
    hooks = load_hooks()
    copied = hooks.speed_sources(str(tmp_path))
    assert all("before the scripts wrote records" in source for _, _, source in copied)

    records = benchmark_script("records")
    row = {"what": "`EmbeddingModel` step", "result": "0.987x", "target": "<= 1.10x"}
    records.write_record(str(tmp_path / "speed_train_step.json"), "train_step", [], {}, [row])
    row = {"what": "exact at 1,000,000", "result": "1.23x", "target": "<= 1.5x"}
    path = str(tmp_path / "speed_evaluation_scale_1000000.json")
    records.write_record(path, "evaluation_scale", ["--num-samples", "1000000"], {}, [row])
    sources = hooks.speed_sources(str(tmp_path))

    assert [script for script, _, _ in sources] == [script for script, _, _ in copied]
    replaced = [i for i, (c, s) in enumerate(zip(copied, sources)) if c != s]
    assert [sources[i][0] for i in replaced] == ["evaluation_scale", "train_step"]
    assert sources[replaced[1]][1][0]["result"] == "0.987x"
    assert "`speed_train_step.json`, written" in sources[replaced[1]][2]
    tiled = [rows for script, rows, _ in sources if script == "evaluation_scale"][1]
    assert "--num-samples 50000" in tiled[0]["command"]  # the other command's rows stay

    table = hooks.speed_table(str(tmp_path))
    assert "| `EmbeddingModel` step | `python benchmarks/train_step.py` | 0.987x |" in table
    provenance = hooks.speed_provenance(str(tmp_path))
    assert "- `benchmarks/train_step.py`: `speed_train_step.json`, written" in provenance
    assert "`benchmarks/evaluation_scale.py`, `benchmarks/distributed_step.py`" in provenance


def test_the_site_shows_where_every_speed_and_recipe_row_comes_from():
    hooks = load_hooks()
    rendered = hooks.render_tables("<!-- table: speed -->\n\n<!-- table: recipes fashion_mnist -->")
    assert "Sources of the rows above (`benchmarks/results/`):" in rendered
    assert "copied from the README's table" in rendered
    assert "Source: `benchmarks/results/recipes_fashion_mnist.json`, copied from" in rendered
    # a record's free text is escaped: speed.json's "speed_<script>.json" once opened a script
    # element in the page that hid every later heading from the browser
    assert "<script" not in rendered and "speed_&lt;script&gt;.json" in rendered
    with open(os.path.join(RESULTS, "speed.json")) as f:
        copied = json.load(f)
    for row in copied["rows"]:
        assert row["result"] in rendered


def test_reranking_records_its_command_and_machine(tmp_path):
    path = str(tmp_path / "reranking.json")
    argv = ["--num-samples", "600", "--dim", "16", "--methods", "aqe", "--output", path]
    benchmark_script("reranking").main(argv)
    with open(path) as f:
        record = json.load(f)
    assert record["command"] == " ".join(["python", "benchmarks/reranking.py", *argv])
    assert record["machine"]["cores"] == os.cpu_count() and record["machine"]["memory_gib"] > 0
    assert [row["rerank"] for row in record["rows"]] == ["none", "aqe(top_n=10)"]
