"""Runs accuracy benchmark rows side by side in separate processes (a many-core or GPU machine).

`benchmarks/accuracy.py` trains its rows one after another; a machine with 16 cores and a GPU
(where one process leaves most of both idle: the budget's models are small) finishes the rows of
a results table many times sooner with several at once. Each line of the jobs file is
`ROW SEED [accuracy.py arguments]` (`#` starts a comment), e.g.:

    baseline/supcon 1
    abe/best 2 --regime pretrained

Each job runs `python benchmarks/accuracy.py --rows ROW --seeds SEED --output JOB ARGS` in its own
folder `OUTPUT/jobs/NNN_ROW_SEED`. With `--template DIR`, DIR's contents are copied into every job
folder first: a `pretrained/` backbone trained once (by `accuracy.py --regime pretrained`) is
then shared by every pretrained row instead of being trained again by each job. A finished
job's records are appended to `OUTPUT/results.jsonl` when it ends, so a run stopped later keeps
them; a failed job's log tail is printed and the next jobs go on. `--launch-until` starts no job
after that many seconds and `--stop-at` kills the jobs still running (a machine lent for a fixed
time); killed jobs are listed, never recorded. With `KERAS_BACKEND=jax`, each job's JAX
allocates GPU memory as it needs it (`XLA_PYTHON_CLIENT_PREALLOCATE=false`), not three quarters
of the GPU each.

Rows trained side by side give the same metrics as rows trained alone (each job has its own
seeds); only their `seconds` depend on what else runs, as every record's `runtime` and the
machine's load say.

Usage:
    python benchmarks/parallel_rows.py --jobs rows.txt --parallel 8 --output runs/gpu
    python benchmarks/parallel_rows.py --jobs rows.txt --template runs/pretrained \
        --launch-until 400 --stop-at 540 --output runs/gpu
"""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
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
                    f"{path}:{number}: expected `ROW SEED [accuracy.py arguments]`, got "
                    f"{line.strip()!r}"
                )
            jobs.append((words[0], int(words[1]), words[2:]))
    return jobs


def job_environment():
    """The jobs' environment: JAX allocates GPU memory as it goes (several processes share it)."""
    env = dict(os.environ)
    if env.get("KERAS_BACKEND") == "jax":
        env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    return env


class Job:
    """One `accuracy.py` process: its folder, log and start time."""

    def __init__(self, number, row, seed, extra, output, script, template):
        self.number, self.row, self.seed = number, row, seed
        self.folder = os.path.join(output, "jobs", f"{number:03d}_{row.replace('/', '_')}_{seed}")
        if template:
            shutil.copytree(template, self.folder, dirs_exist_ok=True)
        os.makedirs(self.folder, exist_ok=True)
        command = [sys.executable, script, "--rows", row, "--seeds", str(seed)]
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
        path = os.path.join(self.folder, "results.jsonl")
        if not os.path.exists(path):
            return ""
        with open(path) as f:
            return f.read()

    def log_tail(self, characters=2000):
        with open(self.log_path, errors="replace") as f:
            return f.read()[-characters:]


def run_jobs(jobs, output, parallel, script, template=None, launch_until=None, stop_at=None):
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
            running.append(Job(number, row, seed, extra, output, script, template))
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
    parser.add_argument("--template", default=None, help="folder copied into every job folder")
    parser.add_argument("--launch-until", type=float, default=None, help="seconds")
    parser.add_argument("--stop-at", type=float, default=None, help="seconds")
    # The script each job runs (the tests run a stand-in).
    script = os.path.join(HERE, "accuracy.py")
    parser.add_argument("--script", default=script, help=argparse.SUPPRESS)
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
    if args.template and not os.path.isdir(args.template):
        parser.error(f"--template {args.template!r} is not a folder")
    outcome = run_jobs(
        jobs,
        args.output,
        args.parallel,
        args.script,
        args.template,
        args.launch_until,
        args.stop_at,
    )
    for key, names in outcome.items():
        print(f"[parallel] {key}: {len(names)}" + "".join(f"\n  {name}" for name in names))
    return 1 if outcome["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
