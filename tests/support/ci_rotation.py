"""CI's bounded runs take a rotating share of a slow test's cases: every case within N runs."""

import os
import subprocess
import time

import pytest

from tests.support.paths import REPO_ROOT


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


def rotating(cases, shares=3):
    """`cases` as pytest parameters; under `KERAS_DML_CI_BUDGET`, those outside this run's share
    are skipped with the reason, so `shares` consecutive CI runs take every case."""
    if not os.environ.get("KERAS_DML_CI_BUDGET"):
        return list(cases)
    this_run = run_number() % shares
    skip = pytest.mark.skip(
        reason=f"CI budget: another run's share (this run: {this_run}/{shares})"
    )
    # Round robin over the cases in their given order.
    return [
        case if index % shares == this_run else pytest.param(case, marks=skip)
        for index, case in enumerate(cases)
    ]
