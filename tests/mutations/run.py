"""Runs the mutation catalogue: every deliberate change must make its listed tests fail.

Usage (from the repository root):

    python -m tests.mutations.run                 # the whole catalogue, 2 workers
    python -m tests.mutations.run --only bier-boosting-running-recursion dc-cluster-vectors
    python -m tests.mutations.run --jobs 1 --no-baseline
    python -m tests.mutations.run --share 1/3     # the defining lines, a third of the rest

Each mutation is applied to its own temporary COPY of the tree (the working tree is never
written), and its tests run there with `pytest -x -q <nodes>` and `PYTHONPATH=<copy>`: in a fork of
this process, which imported TensorFlow and Keras once (`tests/mutations/launch.py`), or with
`--no-fork` in a new interpreter.
A mutation is `killed` when the tests fail (or cannot even be collected, or time out) and
`survived` when they pass. Before that, the catalogue is checked against the tree (each
original text occurs exactly once: otherwise the entry is `stale`) and, unless `--no-baseline`,
all listed tests are run once on an unmutated copy, since a kill by an already failing test
proves nothing. Prints a table (id, outcome, seconds) and exits 1 when any mutation survives,
is stale or errs (e.g. a node id pytest does not know).
"""

import argparse
import pathlib
import shutil
import signal
import sys
import tempfile
import time
import zlib

from tests.mutations.catalogue import CATALOGUE, load_catalogue, stale_reason
from tests.mutations.launch import ForkedTests, SpawnedTests, can_fork, preload_heavy_modules

ROOT = pathlib.Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", ".pytest_cache", ".ruff_cache", "*.egg-info", "build", "dist", "runs"
)
# pytest exit codes: 1 tests failed, 2 interrupted (e.g. a collection error), 4 usage error
# (unknown node id), 5 no test collected.
KILLED_CODES = (1, 2)
POLL_SECONDS = 0.1
# The methods' defining lines (architectures, training logic, custom layers): every share runs them.
ALWAYS_RUN = ("keras_dml/methods/", "keras_dml/models/", "keras_dml/layers/")


def parse_share(text):
    """`"K/N"` -> `(K, N)` with `0 <= K < N`.

    Examples:
    >>> parse_share("1/3")
    (1, 3)
    """
    index, slash, count = str(text).partition("/")
    if not (slash and index.isdigit() and count.isdigit() and int(index) < int(count)):
        raise argparse.ArgumentTypeError(
            f"--share must be K/N with 0 <= K < N, e.g. 0/3. Received: {text!r}"
        )
    return int(index), int(count)


def in_share(record, share):
    """Whether `record` runs in `share` (`(K, N)`): always for a defining line, else by its id.

    The id's CRC-32 picks the share, so adding an entry moves no other one; N runs with
    K = 0 .. N-1 run every entry at least once.
    """
    index, count = share
    if record["file"].startswith(ALWAYS_RUN):
        return True
    return zlib.crc32(record["id"].encode()) % count == index


def copy_tree(destination):
    """Copies the repository (without VCS data and caches) to `destination`."""
    shutil.copytree(ROOT, destination, ignore=IGNORED, symlinks=True)
    return destination


def log_tail(path, lines=3):
    try:
        text = pathlib.Path(path).read_text(errors="replace")
    except OSError:
        return ""
    return " | ".join(text.strip().splitlines()[-lines:])


class Job:
    """One pytest run in its own tree copy: the unmutated baseline or one mutation."""

    def __init__(self, name, nodes, work_root, record=None):
        self.name, self.nodes, self.record = name, nodes, record
        self.work = pathlib.Path(tempfile.mkdtemp(prefix=f"{name}-", dir=work_root))
        self.tree = copy_tree(self.work / "tree")
        self.stale = stale_reason(record, self.tree) if record else None
        if record and not self.stale:
            path = self.tree / record["file"]
            path.write_text(path.read_text().replace(record["original"], record["replacement"]))
        self.tests, self.start, self.code = None, None, None

    def launch(self, launcher):
        self.start = time.perf_counter()
        self.tests = launcher(self.tree, self.nodes, str(self.work / "pytest.log"))

    def seconds(self):
        return time.perf_counter() - self.start

    def finish(self, code):
        self.code = code
        self.tail = log_tail(self.work / "pytest.log")
        shutil.rmtree(self.work, ignore_errors=True)


def run_jobs(jobs, launcher, workers, timeout, on_done):
    """Runs `jobs` with at most `workers` at once; `on_done(job)` as each ends.

    A job past `timeout` seconds is killed with its process group and ends with code
    `"timeout"`. Launching happens in this (single-threaded) loop, so forking is safe.
    """
    pending, running = list(jobs), []
    try:
        while pending or running:
            while pending and len(running) < max(1, workers):
                job = pending.pop(0)
                if job.stale:
                    job.finish(None)
                    on_done(job)
                    continue
                job.launch(launcher)
                running.append(job)
            for job in list(running):
                code = job.tests.poll()
                if code is None and job.seconds() > timeout:
                    job.tests.kill()
                    code = "timeout"
                if code is not None:
                    job.elapsed = job.seconds()
                    running.remove(job)
                    job.finish(code)
                    on_done(job)
            time.sleep(POLL_SECONDS)
    finally:
        for job in running:
            job.tests.kill()
            shutil.rmtree(job.work, ignore_errors=True)


def mutation_row(job):
    """The result row of a finished mutation job."""
    record = job.record
    if job.stale:
        return {"id": record["id"], "outcome": "stale", "seconds": 0.0, "detail": job.stale}
    code = job.code
    if code == "timeout" or code in KILLED_CODES:
        outcome = "killed"
    elif code == 0:
        outcome = "survived"
    else:
        outcome = "error"
    detail = "" if outcome == "killed" else f"pytest exit {code}: {job.tail}"
    return {"id": record["id"], "outcome": outcome, "seconds": job.elapsed, "detail": detail}


def baseline_shares(nodes, workers):
    """`nodes` in `workers` shares, each test file whole in one share (its module set up once).

    Files go, largest first, to the share with the fewest nodes so far.
    """
    by_file = {}
    for node in nodes:
        by_file.setdefault(node.split("::")[0], []).append(node)
    shares = [[] for _ in range(max(1, min(workers, len(by_file))))]
    for file_nodes in sorted(by_file.values(), key=len, reverse=True):
        min(shares, key=len).extend(file_nodes)
    return [sorted(share) for share in shares if share]


def run_baseline(records, launcher, workers, timeout, work_root):
    """Runs every listed test once on unmutated copies, in `workers` parallel shares.

    Returns `None` or a failure message.
    """
    nodes = sorted({node for record in records for node in record["tests"]})
    shares = baseline_shares(nodes, workers)
    jobs = [Job(f"baseline{index}", share, work_root) for index, share in enumerate(shares)]
    start, done = time.perf_counter(), []
    run_jobs(jobs, launcher, workers, timeout, done.append)
    print(
        f"baseline: {len(nodes)} test nodes on the unmutated tree in {len(shares)} share(s), "
        f"{time.perf_counter() - start:.1f} s",
        flush=True,
    )
    for job in done:
        if job.code != 0:
            return (
                f"The listed tests fail on the unmutated tree (pytest exit {job.code}): {job.tail}"
            )
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
        "--no-fork",
        action="store_true",
        help="start a new interpreter per run instead of forking a preloaded one",
    )
    parser.add_argument(
        "--catalogue", default=str(CATALOGUE), help="catalogue JSON (default: the project's)"
    )
    parser.add_argument(
        "--share",
        type=parse_share,
        metavar="K/N",
        help="the defining lines and share K of N of the other entries (CI rotates K per run)",
    )
    args = parser.parse_args(argv)
    records = load_catalogue(args.catalogue)
    if args.only:
        unknown = sorted(set(args.only) - {record["id"] for record in records})
        if unknown:
            parser.error(f"unknown mutation ids {unknown}; see tests/mutations/catalogue.json")
        records = [record for record in records if record["id"] in args.only]
    if args.share:
        records = [record for record in records if in_share(record, args.share)]
    start = time.perf_counter()
    stale = [reason for reason in (stale_reason(r, ROOT) for r in records) if reason]
    if stale:
        print("\n".join(stale))
        return 1
    # SIGTERM (e.g. a CI timeout) unwinds like Ctrl-C: running tests stopped, copies removed.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    fork = can_fork() and not args.no_fork
    if fork:
        preload_heavy_modules()
    launcher = ForkedTests if fork else SpawnedTests
    work_root = tempfile.mkdtemp(prefix="keras-dml-mutations-")
    rows = []

    def report(job):
        row = mutation_row(job)
        print(f"{row['id']}: {row['outcome']} ({row['seconds']:.1f} s)", flush=True)
        rows.append(row)

    try:
        if not args.no_baseline:
            failure = run_baseline(records, launcher, args.jobs, args.timeout * 2, work_root)
            if failure:
                print(failure)
                return 1
        jobs = (Job(r["id"], r["tests"], work_root, record=r) for r in records)
        run_jobs(jobs, launcher, args.jobs, args.timeout, report)
    finally:
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
