"""Every benchmark script the docs quote writes its JSON record, and the site's speed and recipes
tables are built from those records (no number typed by hand).

Each script runs at its smallest settings into a temporary folder (`--record`); the record must
name the script, the command that reproduces it and the machine, hold the measured values, and
format its speed-table rows from those values. The scripts that build and train several models
(seconds each, even tiny) run in one slow test; the evaluation scripts and `train_step` run
in the default suite, as does the check that every script's `--record` defaults to the file the
site reads. The hook builds the speed table from those records alone, in its script order, and
says under the table which record each row comes from (date and machine).
"""

import json
import os
import subprocess
import sys

import pytest

from tests.support.docs_site import load_hooks
from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
RESULTS = os.path.join(ROOT, "benchmarks", "results")


def run_script(name, arguments, tmp_path):
    """Runs `benchmarks.<name> ARGUMENTS --record TMP` in this process; returns its record."""
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
        [sys.executable, "-m", f"benchmarks.{name}", *argv],
        cwd=ROOT,
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    return checked_record(path, name, argv)


def checked_record(path, name, argv):
    """The record at `path`, checked for what every record holds."""
    with open(path) as f:
        record = json.load(f)
    assert record["script"] == f"benchmarks/{name.replace('.', '/')}.py"
    assert record["command"] == " ".join(["python", "-m", f"benchmarks.{name}", *argv])
    machine = record["machine"]
    assert machine["cores"] == os.cpu_count() and machine["memory_gib"] > 0
    assert len(machine["load_average"]) == 3 and "keras" in machine
    assert machine["cpu"] != ""  # the CPU model: weights trained elsewhere may differ
    for row in record.get("rows", []):
        assert set(row) == {"what", "result", "target"} if "method" not in row else True
    return record


def test_train_step_records_its_ratio(tmp_path):
    record = run_script(
        "speed.train_step",
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
        "methods.bier",
        ["--image-size", "32", "--batch-size", "8", "--embedding-dim", "48"]
        + ["--warmup", "1", "--rounds", "1", "--steps", "1"],
        tmp_path,
    )
    ratios = record["measured"]["ratios"]
    assert ratios["baseline"] == 1.0
    assert record["rows"][0]["result"] == f"{ratios['bier']:.3f}x / {ratios['a-bier']:.3f}x"


def check_dcml_records_wall_and_cpu_ratios(tmp_path):
    record = run_script(
        "methods.dcml",
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
        "methods.divide_and_conquer",
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
        "methods.abe",
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
    record = run_script("speed.evaluation", ["--num-samples", "600"], tmp_path)
    measured = record["measured"]
    assert measured["max_retrieval_difference"] < 1e-6
    assert measured["metrics"]["recall@1"] == measured["naive_metrics"]["recall@1"]
    (row,) = record["rows"]
    assert row["result"].startswith(f"{measured['seconds']:.1f} s")
    assert row["what"].startswith("evaluation, 600 x 128, 112 classes")


def test_evaluation_scale_records_exact_and_approximate_rows(tmp_path):
    record = run_script(
        "speed.evaluation_scale", ["--num-samples", "2000", "--approximate", "ivf"], tmp_path
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
        "speed.inference",
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
    record = run_in_process_of_its_own("speed.distributed_step", argv, tmp_path)
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
    rows = benchmark_script("accuracy.recipes").main(argv)
    record = checked_record(path, "accuracy.recipes", argv)
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


SPEED_SCRIPTS = [
    "speed.evaluation",
    "speed.train_step",
    "speed.hub_backbone_step",
    "speed.inference",
    "speed.distributed_step",
]
SPEED_SCRIPTS += ["methods.divide_and_conquer", "methods.abe", "methods.bier", "methods.dcml"]


@pytest.mark.parametrize("name", SPEED_SCRIPTS)
def test_every_speed_script_records_into_the_file_the_site_reads_by_default(name):
    default = benchmark_script(name).build_parser().get_default("record")
    record = f"speed_{name.split('.')[-1]}.json"
    assert default == os.path.join(RESULTS, record)
    assert load_hooks().record_name(f"python -m benchmarks.{name} --x 1") == record


def test_evaluation_scale_and_recipes_default_to_one_record_per_size_and_dataset():
    hooks = load_hooks()
    command = "python -m benchmarks.speed.evaluation_scale --num-samples 50000 --tile-size 16384"
    assert hooks.record_name(command) == "speed_evaluation_scale_50000.json"
    default = "python -m benchmarks.speed.evaluation_scale"
    assert hooks.record_name(default) == "speed_evaluation_scale_1000000.json"
    assert benchmark_script("speed.evaluation_scale").build_parser().get_default("num_samples") == (
        1_000_000
    )
    assert set(hooks.SPEED_SCRIPTS) == {*SPEED_SCRIPTS, "speed.evaluation_scale"}


def write_speed_records(folder, scripts):
    """One record per script in `folder`, with one row whose result names it; two data sizes,
    300,000 and 20,000 rows, for `evaluation_scale` (whose names sort the other way round)."""
    records = benchmark_script("records")
    for script in scripts:
        name = script.split(".")[-1]
        if script == "speed.evaluation_scale":
            for size in (20000, 300000):
                row = {"what": f"exact at {size}", "result": f"{size} rows", "target": "<= 1.5x"}
                rows = [row, {**row, "what": f"IVF at {size}"}]
                path = str(folder / f"speed_evaluation_scale_{size}.json")
                records.write_record(path, script, ["--num-samples", str(size)], {}, rows)
            continue
        row = {"what": f"{name} step", "result": f"{name} 1.01x", "target": "<= 1.10x"}
        records.write_record(str(folder / f"speed_{name}.json"), script, [], {}, [row])


def test_the_speed_table_is_every_record_in_table_order_with_its_source(tmp_path):
    hooks = load_hooks()
    write_speed_records(tmp_path, hooks.SPEED_SCRIPTS)
    sources = hooks.speed_sources(str(tmp_path))

    sizes = {"speed.evaluation_scale": 2}  # one record per data size
    expected = [script for script in hooks.SPEED_SCRIPTS for _ in range(sizes.get(script, 1))]
    assert [script for script, _, _ in sources] == expected
    scale = [rows for script, rows, _ in sources if script == "speed.evaluation_scale"]
    assert [rows[0]["result"] for rows in scale] == ["300000 rows", "20000 rows"]  # largest first
    assert (
        scale[0][0]["command"].endswith("--num-samples 300000") and scale[0][1]["command"] == "same"
    )

    table = hooks.speed_table(str(tmp_path))
    assert (
        "| train_step step | `python -m benchmarks.speed.train_step` | train_step 1.01x |" in table
    )
    assert "| IVF at 300000 | the row above's | 300000 rows |" in table
    provenance = hooks.speed_provenance(str(tmp_path))
    assert "- `benchmarks/speed/train_step.py`: `speed_train_step.json`, written" in provenance
    assert "- `benchmarks/speed/evaluation_scale.py`: `speed_evaluation_scale_20000.json`" in (
        provenance
    )
    assert provenance.count(", written ") == len(sources)


def test_a_speed_script_without_its_record_stops_the_build_naming_the_command(tmp_path):
    hooks = load_hooks()
    write_speed_records(tmp_path, [s for s in hooks.SPEED_SCRIPTS if s != "methods.abe"])
    message = (
        r"no record benchmarks/results/speed_abe.json .* run `python -m benchmarks.methods.abe`"
    )
    with pytest.raises(ValueError, match=message):
        hooks.speed_table(str(tmp_path))


def test_the_site_shows_where_every_speed_and_recipe_row_comes_from():
    hooks = load_hooks()
    rendered = hooks.render_tables("<!-- table: speed -->\n\n<!-- table: recipes fashion_mnist -->")
    assert "Sources of the rows above (`benchmarks/results/`):" in rendered
    assert "Source: `benchmarks/results/recipes_fashion_mnist.json`, copied from" in rendered
    assert "<script" not in rendered
    assert not os.path.exists(os.path.join(RESULTS, "speed.json"))  # no row copied by hand
    for script in hooks.SPEED_SCRIPTS:
        for name in hooks.speed_record_names(script):
            assert f"`{name}`, written " in rendered
            with open(os.path.join(RESULTS, name)) as f:
                record = json.load(f)
            assert record["rows"] and all(row["result"] in rendered for row in record["rows"])


def test_reranking_records_its_command_and_machine(tmp_path):
    path = str(tmp_path / "reranking.json")
    argv = ["--num-samples", "600", "--dim", "16", "--methods", "aqe", "--output", path]
    benchmark_script("speed.reranking").main(argv)
    with open(path) as f:
        record = json.load(f)
    assert record["command"] == " ".join(["python", "-m", "benchmarks.speed.reranking", *argv])
    assert record["machine"]["cores"] == os.cpu_count() and record["machine"]["memory_gib"] > 0
    assert [row["rerank"] for row in record["rows"]] == ["none", "aqe(top_n=10)"]
