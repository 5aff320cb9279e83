"""CI's bounded runs take a rotating share of the slow tests: every test within a few runs.

Two ways: `rotating` round-robins the cases of a per-case test (a third of the methods each
run), and `rotate_slow_items` (tests/conftest.py) gives every other slow test one of two runs,
unless it carries `@pytest.mark.ci_every_run`.
"""

import functools
import os
import subprocess
import time
import zlib

import pytest

from tests.support.paths import REPO_ROOT


@functools.cache
def run_number():
    """The commit count of the checkout (the day number without git): what picks the share."""
    try:
        out = subprocess.run(
            ["git", "rev-list", "--count", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return int(out.stdout.strip())
    except (OSError, ValueError, subprocess.SubprocessError):
        return int(time.time() // 86400)


def rotating(cases, shares=3, marks=()):
    """`cases` as pytest parameters, each with `marks`; under `KERAS_DML_CI_BUDGET`, those
    outside this run's share are skipped with the reason, so `shares` consecutive CI runs take
    every case."""
    marks = (*marks, pytest.mark.ci_rotating)
    if not os.environ.get("KERAS_DML_CI_BUDGET"):
        return [pytest.param(case, marks=marks) for case in cases]
    this_run = run_number() % shares
    skip = pytest.mark.skip(
        reason=f"CI budget: another run's share (this run: {this_run}/{shares})"
    )
    # Round robin over the cases in their given order.
    return [
        pytest.param(case, marks=marks if index % shares == this_run else (*marks, skip))
        for index, case in enumerate(cases)
    ]


# The slow tests that `rotating` leaves whole run in one of this many consecutive CI runs.
SLOW_SHARES = 2


def rotate_slow_items(items, shares=SLOW_SHARES):
    """Under `KERAS_DML_CI_BUDGET`, skips the slow tests outside this run's share: each slow
    test that is not a `rotating` case (marked `ci_rotating`) nor marked `ci_every_run` runs
    when its node id's CRC-32 falls in this run's share, so `shares` consecutive CI runs take
    every one."""
    if not os.environ.get("KERAS_DML_CI_BUDGET"):
        return
    this_run = run_number() % shares
    skip = pytest.mark.skip(
        reason=f"CI budget: another run's share of the slow tests (this run: {this_run}/{shares})"
    )
    for item in items:
        if item.get_closest_marker("slow") is None:
            continue
        if item.get_closest_marker("ci_rotating") or item.get_closest_marker("ci_every_run"):
            continue
        if zlib.crc32(item.nodeid.encode()) % shares != this_run:
            item.add_marker(skip)
