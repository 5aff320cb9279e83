"""Runs the mutation catalogue: every deliberate change must make its listed tests fail.

Usage (from the repository root):

    python -m tests.mutations.run                 # the whole catalogue, 2 workers
    python -m tests.mutations.run --only bier-boosting-running-recursion dc-cluster-vectors
    python -m tests.mutations.run --jobs 1 --no-baseline

Each mutation is applied to its own temporary COPY of the tree (the working tree is never
written), and its tests run there with `python -m pytest -x -q <nodes>` and `PYTHONPATH=<copy>`.
A mutation is `killed` when the tests fail (or cannot even be collected, or time out) and
`survived` when they pass. Before that, the catalogue is checked against the tree (each
original text occurs exactly once: otherwise the entry is `stale`) and, unless `--no-baseline`,
all listed tests are run once on an unmutated copy, since a kill by an already failing test
proves nothing. Prints a table (id, outcome, seconds) and exits 1 when any mutation survives,
is stale or errs (e.g. a node id pytest does not know).
"""

import argparse
import concurrent.futures
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tests.mutations.catalogue import CATALOGUE, load_catalogue, stale_reason

ROOT = pathlib.Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", ".pytest_cache", ".ruff_cache", "*.egg-info", "build", "dist", "runs"
)
# pytest exit codes: 1 tests failed, 2 interrupted (e.g. a collection error), 4 usage error
# (unknown node id), 5 no test collected.
KILLED_CODES = (1, 2)
# pytest processes in flight, stopped when the runner is interrupted.
RUNNING = set()


def copy_tree(destination):
    """Copies the repository (without VCS data and caches) to `destination`."""
    shutil.copytree(ROOT, destination, ignore=IGNORED, symlinks=True)
    return destination


def run_tests(tree, nodes, timeout):
    """Runs `nodes` in `tree`; returns `(returncode or "timeout", seconds, output tail)`."""
    env = dict(os.environ, PYTHONPATH=str(tree), TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("PYTEST_ADDOPTS", None)
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-x", "-q", *nodes],
        cwd=tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    RUNNING.add(process)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return "timeout", time.perf_counter() - start, ""
    finally:
        RUNNING.discard(process)
    tail = output.strip().splitlines()[-3:]
    return process.returncode, time.perf_counter() - start, " | ".join(tail)


def run_mutation(record, timeout, work_root):
    """Applies one mutation to a fresh copy and runs its tests; returns a result row."""
    with tempfile.TemporaryDirectory(prefix=f"{record['id']}-", dir=work_root) as work:
        tree = copy_tree(pathlib.Path(work) / "tree")
        reason = stale_reason(record, tree)
        if reason:
            return {"id": record["id"], "outcome": "stale", "seconds": 0.0, "detail": reason}
        path = tree / record["file"]
        path.write_text(path.read_text().replace(record["original"], record["replacement"]))
        code, seconds, tail = run_tests(tree, record["tests"], timeout)
    if code == "timeout" or code in KILLED_CODES:
        outcome = "killed"
    elif code == 0:
        outcome = "survived"
    else:
        outcome = "error"
    detail = "" if outcome == "killed" else f"pytest exit {code}: {tail}"
    return {"id": record["id"], "outcome": outcome, "seconds": seconds, "detail": detail}


def run_baseline(records, timeout, work_root):
    """Runs every listed test once on an unmutated copy; returns `None` or a failure message."""
    nodes = sorted({node for record in records for node in record["tests"]})
    with tempfile.TemporaryDirectory(prefix="baseline-", dir=work_root) as work:
        tree = copy_tree(pathlib.Path(work) / "tree")
        code, seconds, tail = run_tests(tree, nodes, timeout)
    print(f"baseline: {len(nodes)} test nodes on the unmutated tree, {seconds:.1f} s", flush=True)
    if code != 0:
        return f"The listed tests fail on the unmutated tree (pytest exit {code}): {tail}"
    return None


def print_table(rows):
    width = max(len(row["id"]) for row in rows)
    print(f"{'id':<{width}}  {'outcome':<8}  seconds")
    for row in rows:
        print(f"{row['id']:<{width}}  {row['outcome']:<8}  {row['seconds']:7.1f}")
    for row in rows:
        if row["detail"]:
            print(f"{row['id']}: {row['detail']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="parallel workers (default 2)")
    parser.add_argument("--only", nargs="+", metavar="ID", help="run these mutation ids only")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per mutation")
    parser.add_argument(
        "--no-baseline", action="store_true", help="skip the run on the unmutated tree"
    )
    parser.add_argument(
        "--catalogue", default=str(CATALOGUE), help="catalogue JSON (default: the project's)"
    )
    args = parser.parse_args(argv)
    records = load_catalogue(args.catalogue)
    if args.only:
        unknown = sorted(set(args.only) - {record["id"] for record in records})
        if unknown:
            parser.error(f"unknown mutation ids {unknown}; see tests/mutations/catalogue.json")
        records = [record for record in records if record["id"] in args.only]
    start = time.perf_counter()
    stale = [reason for reason in (stale_reason(r, ROOT) for r in records) if reason]
    if stale:
        print("\n".join(stale))
        return 1
    # SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C: running tests stopped, copies removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    work_root = tempfile.mkdtemp(prefix="keras-dml-mutations-")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        if not args.no_baseline:
            failure = run_baseline(records, args.timeout * 2, work_root)
            if failure:
                print(failure)
                return 1
        futures = [pool.submit(run_mutation, r, args.timeout, work_root) for r in records]
        rows = []
        for future in concurrent.futures.as_completed(futures):
            row = future.result()
            print(f"{row['id']}: {row['outcome']} ({row['seconds']:.1f} s)", flush=True)
            rows.append(row)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        for process in list(RUNNING):
            process.kill()
        shutil.rmtree(work_root, ignore_errors=True)
    order = {record["id"]: index for index, record in enumerate(records)}
    rows.sort(key=lambda row: order[row["id"]])
    print_table(rows)
    bad = [row for row in rows if row["outcome"] != "killed"]
    print(
        f"{len(rows) - len(bad)} of {len(rows)} mutations killed in "
        f"{time.perf_counter() - start:.0f} s"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
