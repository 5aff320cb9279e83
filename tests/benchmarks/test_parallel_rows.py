"""`benchmarks.accuracy.parallel_rows`: accuracy rows in parallel processes, records kept as jobs
end.

The jobs run a stand-in for `run.py` (same arguments, one JSON record per run), so these
tests check the scheduling (parallelism, shared backbone, time limits, failures) in seconds.
"""

import glob
import json
import os
import textwrap

import pytest

from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

STAND_IN = textwrap.dedent(
    """
    import argparse, glob, json, os, sys, time

    parser = argparse.ArgumentParser()
    for name in ("--rows", "--seeds", "--output"):
        parser.add_argument(name)
    parser.add_argument("--regime", default="scratch")
    args = parser.parse_args()
    open(os.path.join(args.output, "started_" + args.rows), "w").close()
    if args.rows == "fails":
        sys.exit("the stand-in fails on purpose")
    if args.rows == "hangs":
        time.sleep(120)
    if args.rows == "waits":  # ends only if its partner runs at the same time
        deadline = time.time() + float(os.environ.get("STAND_IN_WAIT", "30"))
        partner = os.path.join(os.path.dirname(args.output), "*", "started_partner")
        while not glob.glob(partner):
            if time.time() > deadline:
                sys.exit("no partner ran alongside")
            time.sleep(0.05)
    record = {
        "row": args.rows,
        "seed": int(args.seeds),
        "regime": args.regime,
        "backbone": os.path.exists(
            os.path.join(args.output, "pretrained", "0123abcd", "backbone.weights.h5")
        ),
        "preallocate": os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE"),
    }
    with open(os.path.join(args.output, "results.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\\n")
    """
)


@pytest.fixture
def parallel_rows():
    return benchmark_script("accuracy.parallel_rows")


def run(module, tmp_path, lines, *options):
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    (tmp_path / "jobs.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    code = module.main(
        ["--jobs", str(tmp_path / "jobs.txt"), "--output", str(out)]
        + ["--script", str(tmp_path / "stand_in.py"), *options]
    )
    path = out / "results.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return code, records


def test_jobs_run_side_by_side_share_the_backbone_and_record_as_they_end(
    parallel_rows, tmp_path, monkeypatch
):
    backbone = tmp_path / "first" / "pretrained" / "0123abcd"
    backbone.mkdir(parents=True)
    (backbone / "backbone.weights.h5").write_text("backbone")
    (tmp_path / "first" / "results.jsonl").write_text("the first folder's own records\n")
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    monkeypatch.delenv("XLA_PYTHON_CLIENT_PREALLOCATE", raising=False)
    lines = ["# a comment line", "waits 0", "partner 1 --regime pretrained"]
    code, records = run(
        parallel_rows, tmp_path, lines, "--parallel", "2", "--pretrained", str(tmp_path / "first")
    )
    assert code == 0
    assert sorted((r["row"], r["seed"], r["regime"]) for r in records) == [
        ("partner", 1, "pretrained"),
        ("waits", 0, "scratch"),
    ]
    assert all(r["backbone"] for r in records)  # every job folder got the shared backbone
    assert len(records) == 2  # and nothing else of the first folder (its records)
    assert all(r["preallocate"] == "false" for r in records)  # JAX jobs share the GPU


def test_one_at_a_time_the_waiting_job_fails_and_the_rest_still_run(
    parallel_rows, tmp_path, monkeypatch
):
    monkeypatch.setenv("STAND_IN_WAIT", "1")  # its partner cannot start before it ends
    code, records = run(
        parallel_rows, tmp_path, ["waits 0", "fails 0", "partner 0"], "--parallel", "1"
    )
    assert code == 1  # a failed job is the command's failure, after the others ran
    assert [r["row"] for r in records] == ["partner"]


def test_time_limits_kill_running_jobs_and_start_no_more(parallel_rows, tmp_path, capsys):
    lines = ["partner 0", "hangs 0", "partner 1"]
    code, records = run(
        parallel_rows, tmp_path, lines, "--parallel", "2", "--launch-until", "0.5", "--stop-at", "3"
    )
    printed = capsys.readouterr().out
    assert code == 0 and [r["row"] for r in records] == ["partner"]
    assert "killed: 1\n  1 hangs seed 0" in printed
    assert "not_started: 1\n  2 partner seed 1" in printed


def test_a_malformed_jobs_line_is_named(parallel_rows, tmp_path, capsys):
    (tmp_path / "jobs.txt").write_text("baseline/supcon\n")
    with pytest.raises(SystemExit):
        parallel_rows.main(["--jobs", str(tmp_path / "jobs.txt"), "--output", str(tmp_path)])
    error = capsys.readouterr().err
    assert "jobs.txt:1: expected `ROW SEED [run.py arguments]`" in error
    assert not os.path.exists(tmp_path / "results.jsonl")


def test_recorded_jobs_are_skipped_and_pretrained_jobs_need_the_shared_backbone(
    parallel_rows, tmp_path, capsys
):
    recorded = tmp_path / "recorded.jsonl"
    budget = {"image_size": 32}
    lines = [
        {"row": "partner", "seed": 0, "dataset": "hangul", "budget": budget},
        {"row": "partner", "seed": 2, "dataset": "kanji", "budget": budget},  # another dataset
        {"row": "partner", "seed": 3, "dataset": "hangul", "budget": {"image_size": 224}},
    ]
    recorded.write_text("".join(json.dumps(line) + "\n" for line in lines))
    jobs = ["partner 0", "partner 1", "partner 2", "partner 3"]
    code, records = run(parallel_rows, tmp_path, jobs, "--skip-recorded", str(recorded))
    assert code == 0 and sorted(r["seed"] for r in records) == [1, 2, 3]

    with pytest.raises(SystemExit):
        run(parallel_rows, tmp_path, ["partner 0 --regime pretrained"])
    assert "pretrained jobs need --pretrained DIR" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(parallel_rows, tmp_path, ["partner 0"], "--pretrained", str(tmp_path))
    assert "holds no pretrained/*/*.weights.h5" in capsys.readouterr().err


@pytest.mark.parametrize(
    "path", sorted(glob.glob(os.path.join(REPO_ROOT, "benchmarks", "jobs", "*.txt")))
)
def test_every_jobs_file_names_rows_that_exist_with_arguments_accuracy_takes(parallel_rows, path):
    jobs = parallel_rows.read_jobs(path)
    names = benchmark_script("accuracy.run").row_names("normalized_softmax")
    assert jobs and all(row in names for row, _, _ in jobs)
    keys = [parallel_rows.job_key(*job) for job in jobs]
    assert len(set(keys)) == len(keys)  # no job twice


def test_a_second_run_in_the_same_folder_records_only_what_its_jobs_add(parallel_rows, tmp_path):
    # A lease ends, the jobs run again into the same output: earlier records are not repeated.
    _, first = run(parallel_rows, tmp_path, ["partner 0"])
    _, both = run(parallel_rows, tmp_path, ["partner 0"])
    assert len(first) == 1 and len(both) == 2  # results.jsonl: one record per run, not three
