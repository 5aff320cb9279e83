"""CI's rotating shares of slow cases: each run a part, consecutive runs every case."""

import tests.support.ci_rotation as ci_rotation

CASES = ["abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads"]


def taken(params):
    return [p for p in params if isinstance(p, str)]


def test_three_consecutive_ci_runs_take_every_case_once(monkeypatch):
    monkeypatch.setenv("KERAS_DML_CI_BUDGET", "1")
    runs = []
    for number in (40, 41, 42):
        monkeypatch.setattr(ci_rotation, "run_number", lambda number=number: number)
        runs.append(taken(ci_rotation.rotating(CASES)))
    assert sorted(sum(runs, [])) == CASES
    assert all(0 < len(run) < len(CASES) for run in runs)


def test_without_the_budget_every_case_runs(monkeypatch):
    monkeypatch.delenv("KERAS_DML_CI_BUDGET", raising=False)
    assert ci_rotation.rotating(CASES) == CASES
