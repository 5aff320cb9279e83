"""Runs accuracy benchmark rows side by side in separate processes (a many-core or GPU machine).

`benchmarks/accuracy/run.py` trains its rows one after another; a machine with 16 cores and a GPU
(where one process leaves most of both idle: the budget's models are small) finishes the rows of
a results table many times sooner with several at once. Each line of the jobs file is
`ROW SEED [run.py arguments]` (`#` starts a comment), e.g.:

    baseline/supcon 1
    abe/best 2 --regime pretrained

Each job runs `python -m benchmarks.accuracy.run --rows ROW --seeds SEED --output JOB ARGS` in its
own folder `OUTPUT/jobs/NNN_ROW_SEED`. With `--pretrained DIR` (an accuracy run's output folder),
the `pretrained/` backbone trained there once (by its first `--regime pretrained` row) is copied
into every job folder, so every pretrained row fine-tunes the same weights; pretrained jobs
without it are refused (each job would train a backbone of its own). A finished job's records
are appended to `OUTPUT/results.jsonl` when it ends, so a run stopped later keeps them; a failed
job's log tail is printed and the next jobs go on. `--launch-until` starts no job after that many
seconds and `--stop-at` kills the jobs still running (a machine lent for a fixed time); killed
jobs are listed, never recorded, and the same jobs run again into the same output resume their
runs from their backups (`keras_dml.training.train`), recording only what they add. With
`KERAS_BACKEND=jax`, each job's JAX allocates GPU memory as it needs it
(`XLA_PYTHON_CLIENT_PREALLOCATE=false`), not three quarters of the GPU each.

Each job is its own process with its own seeds: what runs beside it changes its `seconds`, which
the tables never average across runtimes (`table.train_time`).

`benchmarks/jobs/` holds the jobs of whole tables (the reality check, the papers' regime);
`--skip-recorded RESULTS` leaves out the jobs a records file already has (same row, seed,
regime, dataset and image size), so a table's file runs what is missing.

Usage:
    python -m benchmarks.accuracy.parallel_rows --jobs rows.txt --parallel 8 --output runs/gpu
    python -m benchmarks.accuracy.parallel_rows --jobs benchmarks/jobs/reality_check_hangul.txt \
        --skip-recorded benchmarks/results/reality_check_hangul.jsonl \
        --skip-recorded benchmarks/results/accuracy_hangul.jsonl --output runs/gpu
    python -m benchmarks.accuracy.parallel_rows --jobs benchmarks/jobs/papers_regime_hangul.txt \
        --pretrained runs/pretrained --launch-until 400 --stop-at 540 --output runs/gpu
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

from benchmarks.accuracy.rows import BUDGET
from benchmarks.accuracy.run import build_parser as accuracy_parser

ACCURACY = ["-m", "benchmarks.accuracy.run"]  # what each job runs, after the interpreter
POLL_SECONDS = 0.5


def read_jobs(path):
    """`[(row, seed, extra arguments)]` of a jobs file; raises ValueError on a malformed line."""
    jobs = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) < 2 or not words[1].isdigit():
                raise ValueError(
                    f"{path}:{number}: expected `ROW SEED [run.py arguments]`, got {line.strip()!r}"
                )
            jobs.append((words[0], int(words[1]), words[2:]))
    return jobs


def job_key(row, seed, extra):
    """`(row, seed, regime, dataset, image size)` a job records (read from its arguments)."""
    args = accuracy_parser().parse_args(["--rows", row, "--seeds", str(seed), *extra])
    size = BUDGET["image_size"]
    for item in args.set:
        key, _, value = item.partition("=")
        size = int(value) if key == "image_size" else size
    return row, int(seed), args.regime, args.dataset, size


def record_key(record):
    """`job_key` of a recorded run."""
    regime = record.get("regime", "scratch")
    size = record["budget"]["image_size"]
    return record["row"], record["seed"], regime, record["dataset"], size


def unrecorded(jobs, paths):
    """The jobs of which no record in the `results.jsonl` files `paths` exists."""
    recorded = set()
    for path in paths:
        with open(path) as f:
            recorded |= {record_key(json.loads(line)) for line in f if line.strip()}
    return [job for job in jobs if job_key(*job) not in recorded]


def job_environment():
    """The jobs' environment: JAX allocates GPU memory as it goes (several processes share it)."""
    env = dict(os.environ)
    if env.get("KERAS_BACKEND") == "jax":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return env


class Job:
    """One `run.py` process: its folder, log and start time."""

    def __init__(self, number, row, seed, extra, output, runner, pretrained):
        self.number, self.row, self.seed = number, row, seed
        self.folder = os.path.join(output, "jobs", f"{number:03d}_{row.replace('/', '_')}_{seed}")
        if pretrained:
            shutil.copytree(
                os.path.join(pretrained, "pretrained"),
                os.path.join(self.folder, "pretrained"),
                dirs_exist_ok=True,
            )
        os.makedirs(self.folder, exist_ok=True)
        # A folder of an earlier run is reused: a job killed at a lease's end resumes its run
        # (keras-dml runs resume from their backup), and only the records it adds are read.
        self.results = os.path.join(self.folder, "results.jsonl")
        self.offset = os.path.getsize(self.results) if os.path.exists(self.results) else 0
        command = [sys.executable, *runner, "--rows", row, "--seeds", str(seed)]
        command += ["--output", self.folder, *extra]
        self.log_path = os.path.join(self.folder, "log.txt")
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=job_environment()
            )
        self.started = time.perf_counter()

    def name(self):
        return f"{self.number} {self.row} seed {self.seed}"

    def records(self):
        """The records this job appended to its folder's results.jsonl."""
        if not os.path.exists(self.results):
            return ""
        with open(self.results) as f:
            f.seek(self.offset)
            return f.read()

    def log_tail(self, characters=2000):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-characters:]


def run_jobs(jobs, output, parallel, runner, pretrained=None, launch_until=None, stop_at=None):
    """Runs `jobs` at most `parallel` at a time; returns `{"done", "failed", "killed",
    "not_started"}` lists of job names. Records go to `output/results.jsonl` as jobs end."""
    os.makedirs(output, exist_ok=True)
    results = os.path.join(output, "results.jsonl")
    start = time.perf_counter()
    waiting = list(enumerate(jobs))
    running, outcome = [], {"done": [], "failed": [], "killed": [], "not_started": []}
    while waiting or running:
        _collect(running, results, outcome)
        elapsed = time.perf_counter() - start
        stopped = stop_at is not None and elapsed >= stop_at
        for job in running if stopped else []:
            job.process.kill()
            job.process.wait()
            outcome["killed"].append(job.name())
            print(f"[parallel] killed {job.name()} at {elapsed:.0f}s", flush=True)
        if stopped:
            running = []
        if stopped or (launch_until is not None and elapsed >= launch_until):
            outcome["not_started"] += [f"{n} {row} seed {seed}" for n, (row, seed, _) in waiting]
            waiting = []
        while waiting and len(running) < parallel:
            number, (row, seed, extra) = waiting.pop(0)
            running.append(Job(number, row, seed, extra, output, runner, pretrained))
            print(f"[parallel] {elapsed:6.0f}s start {running[-1].name()}", flush=True)
        if running:
            time.sleep(POLL_SECONDS)
    return outcome


def _collect(running, results, outcome):
    """Removes the ended jobs from `running`: a success's records go to `results`."""
    for job in [job for job in running if job.process.poll() is not None]:
        running.remove(job)
        seconds = time.perf_counter() - job.started
        records = job.records()
        if job.process.returncode == 0 and records:
            with open(results, "a") as f:
                f.write(records)
            outcome["done"].append(job.name())
            print(f"[parallel] done {job.name()} in {seconds:.0f}s", flush=True)
        else:
            outcome["failed"].append(job.name())
            print(
                f"[parallel] FAILED {job.name()} (exit {job.process.returncode}) after "
                f"{seconds:.0f}s:\n{job.log_tail()}",
                flush=True,
            )


def build_parser():
    """The command line of this script (also read by the README command checks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", required=True, help="file of `ROW SEED [arguments]` lines")
    parser.add_argument("--output", required=True, help="folder of results.jsonl and jobs/")
    parser.add_argument("--parallel", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--pretrained", default=None, help="accuracy.run output folder whose pretrained/ to share"
    )
    parser.add_argument("--launch-until", type=float, default=None, help="seconds")
    parser.add_argument("--stop-at", type=float, default=None, help="seconds")
    parser.add_argument(
        "--skip-recorded",
        action="append",
        default=[],
        metavar="RESULTS",
        help="skip the jobs this results.jsonl already records (repeatable)",
    )
    # A script file each job runs instead of the accuracy benchmark (the tests run a stand-in).
    parser.add_argument("--script", default=None, help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.parallel < 1:
        parser.error(f"--parallel must be at least 1, got {args.parallel}")
    try:
        jobs = read_jobs(args.jobs)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    try:
        jobs = unrecorded(jobs, args.skip_recorded)
    except OSError as error:
        parser.error(f"--skip-recorded: {error}")
    backbones = glob.glob(os.path.join(args.pretrained or "", "pretrained", "*", "*.weights.h5"))
    if args.pretrained and not backbones:
        parser.error(f"--pretrained {args.pretrained!r} holds no pretrained/*/*.weights.h5")
    if not args.pretrained and any("pretrained" in job_key(*job)[2] for job in jobs):
        parser.error(
            "pretrained jobs need --pretrained DIR (a folder where accuracy.run trained the "
            "backbone once): without it each job would train a backbone of its own"
        )
    outcome = run_jobs(
        jobs,
        args.output,
        args.parallel,
        [args.script] if args.script else ACCURACY,
        args.pretrained,
        args.launch_until,
        args.stop_at,
    )
    for key, names in outcome.items():
        print(f"[parallel] {key}: {len(names)}" + "".join(f"\n  {name}" for name in names))
    return 1 if outcome["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
