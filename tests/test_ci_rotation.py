"""CI's rotating shares of slow cases: each run a part, consecutive runs every case."""

import pytest

import tests.support.ci_rotation as ci_rotation

CASES = ["abe", "baseline", "bier", "dc", "dcml", "hdc", "mheads"]


def taken(params):
    """The cases of `params` that run (carry no skip mark)."""
    return [p.values[0] for p in params if not any(m.name == "skip" for m in p.marks)]


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
    assert taken(ci_rotation.rotating(CASES)) == CASES


@pytest.mark.parametrize("budget", [None, "1"])
def test_every_case_keeps_the_marks_it_is_given(monkeypatch, budget):
    if budget:
        monkeypatch.setenv("KERAS_DML_CI_BUDGET", budget)
    else:
        monkeypatch.delenv("KERAS_DML_CI_BUDGET", raising=False)
    params = ci_rotation.rotating(CASES, marks=(pytest.mark.slow,))
    assert all("slow" in [m.name for m in p.marks] for p in params)


class Item:
    """What `rotate_slow_items` reads and writes of a pytest item."""

    def __init__(self, nodeid, *marks):
        self.nodeid, self.marks = nodeid, list(marks)

    def get_closest_marker(self, name):
        return next((m for m in self.marks if m.name == name), None)

    def add_marker(self, mark):
        self.marks.append(mark)


def toy_suite():
    slow = pytest.mark.slow.mark
    items = [Item(f"tests/test_toy.py::test_whole[{case}]", slow) for case in range(12)]
    items.append(Item("tests/test_toy.py::test_every_run", slow, pytest.mark.ci_every_run.mark))
    items.append(Item("tests/test_toy.py::test_case[abe]", slow, pytest.mark.ci_rotating.mark))
    items.append(Item("tests/test_toy.py::test_default"))
    return items


def ran(monkeypatch, number):
    """The node ids of `toy_suite` that run at commit count `number`."""
    monkeypatch.setattr(ci_rotation, "run_number", lambda: number)
    items = toy_suite()
    ci_rotation.rotate_slow_items(items)
    return {item.nodeid for item in items if not item.get_closest_marker("skip")}


def test_two_consecutive_ci_runs_take_every_other_slow_test_once(monkeypatch):
    monkeypatch.setenv("KERAS_DML_CI_BUDGET", "1")
    first, second = ran(monkeypatch, 40), ran(monkeypatch, 41)
    everyone = {item.nodeid for item in toy_suite()}
    always = {n for n in everyone if not n.split("::")[1].startswith("test_whole")}
    assert first & second == always  # ci_every_run, rotating's own cases, the default suite
    assert first | second == everyone
    assert 0 < len(first - always) < 12
    monkeypatch.delenv("KERAS_DML_CI_BUDGET")
    assert ran(monkeypatch, 40) == everyone
