"""The mutation catalogue matches the code: each original text occurs once, each test exists.

Static checks, and one run of the runner on a toy catalogue (a kill and a survivor);
`python -m tests.mutations.run` runs the catalogue itself (see CONTRIBUTING.md).
"""

import json
import pathlib
import re
import subprocess
import sys

import pytest

from tests.mutations.catalogue import (
    CATALOGUE,
    load_catalogue,
    missing_node_reason,
    outside_default_suite_reason,
    stale_reason,
)
from tests.support.paths import REPO_ROOT

ROOT = pathlib.Path(REPO_ROOT)
RECORDS = load_catalogue()


def test_catalogue_is_large_and_covers_every_method_and_part():
    assert len(RECORDS) >= 40
    files = {record["file"] for record in RECORDS}
    for part in (
        "keras_dml/models/bier.py",
        "keras_dml/models/boosting/",
        "keras_dml/models/divide_and_conquer.py",
        "keras_dml/models/dcml.py",
        "keras_dml/models/composition/",
        "keras_dml/models/attention/",
        "keras_dml/methods/divide_and_conquer/",
        "keras_dml/methods/division/",
        "keras_dml/methods/hierarchical_divide_and_conquer/",
        "keras_dml/layers/",
        "keras_dml/losses/",
        "keras_dml/evaluation/",
        "keras_dml/data/samplers/",
        "recipes/configs/",
    ):
        assert any(f.startswith(part) for f in files), f"no mutation under {part}"


@pytest.mark.parametrize("record", RECORDS, ids=[record["id"] for record in RECORDS])
def test_original_text_occurs_exactly_once(record):
    reason = stale_reason(record, ROOT)
    assert reason is None, reason


@pytest.mark.parametrize("record", RECORDS, ids=[record["id"] for record in RECORDS])
def test_listed_test_nodes_exist(record):
    reasons = [missing_node_reason(node, ROOT) for node in record["tests"]]
    assert not any(reasons), "; ".join(r for r in reasons if r)


@pytest.mark.parametrize("record", RECORDS, ids=[record["id"] for record in RECORDS])
def test_listed_tests_are_in_the_default_suite(record):
    reasons = [outside_default_suite_reason(node, ROOT) for node in record["tests"]]
    assert not any(reasons), "; ".join(r for r in reasons if r)


def test_a_slow_or_backends_mark_takes_a_test_out_of_the_default_suite(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "import pytest\n"
        "@pytest.mark.slow\n"
        "def test_slow(): pass\n"
        "@pytest.mark.parametrize('x', [1])\n"
        "def test_fast(x): pass\n"
        "class TestGroup:\n"
        "    @pytest.mark.backends\n"
        "    def test_other_backend(self): pass\n"
    )
    (tmp_path / "test_b.py").write_text(
        "import pytest\npytestmark = pytest.mark.slow\ndef test_x(): pass\n"
    )
    assert "slow" in outside_default_suite_reason("test_a.py::test_slow", tmp_path)
    assert outside_default_suite_reason("test_a.py::test_fast[1]", tmp_path) is None
    assert "backends" in outside_default_suite_reason(
        "test_a.py::TestGroup::test_other_backend", tmp_path
    )
    assert "slow" in outside_default_suite_reason("test_b.py::test_x", tmp_path)


def test_static_checks_catch_stale_entries_and_unknown_nodes(tmp_path):
    record = dict(RECORDS[0])
    assert "occurs 0 times" in stale_reason({**record, "original": "no such text\n"}, ROOT)
    node = "tests/mutations/test_catalogue.py::test_original_text_occurs_exactly_once"
    assert missing_node_reason(node, ROOT) is None
    assert missing_node_reason(node + "_typo", ROOT) is not None
    assert missing_node_reason(node + "[bier-shrinkage-rates]", ROOT) is not None
    assert missing_node_reason("tests/test_no_such_file.py::test_x", ROOT) is not None
    repeated = tmp_path / "catalogue.json"
    repeated.write_text(json.dumps([RECORDS[0], RECORDS[0]]))
    with pytest.raises(ValueError, match="repeated"):
        load_catalogue(repeated)
    assert CATALOGUE.is_file()


SUGGESTION_TEST = (
    "tests/utils/test_suggestions.py::"
    "test_the_helper_ignores_case_and_dashes_and_keeps_the_known_spelling"
)


def test_the_runner_runs_the_mutated_copy_and_tells_kills_from_survivors(tmp_path):
    # Two mutations of a small module, run by the runner as CI runs it (forked children, the
    # unmutated baseline first): breaking `closest` must be killed by its test, and a change
    # of a comment must survive, so a kill means the copy's mutated code failed its test, not
    # that the forked child could not run tests at all.
    catalogue = [
        {
            "id": "toy-closest-returns-nothing",
            "file": "keras_dml/utils/suggestions.py",
            "original": "return by_normal[match[0]] if match else None",
            "replacement": "return None",
            "breaks": "the suggestion itself",
            "tests": [SUGGESTION_TEST],
        },
        {
            "id": "toy-comment-only",
            "file": "keras_dml/utils/suggestions.py",
            "original": "# difflib's similarity ratio a known name needs to be suggested.",
            "replacement": "# (a comment changed: nothing breaks)",
            "breaks": "nothing",
            "tests": [SUGGESTION_TEST],
        },
    ]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(catalogue))
    result = subprocess.run(
        [sys.executable, "-m", "tests.mutations.run", "--catalogue", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    rows = dict(re.findall(r"^(toy-[\w-]+)\s+(\w+)\s+[\d.]+$", result.stdout, re.MULTILINE))
    assert rows == {"toy-closest-returns-nothing": "killed", "toy-comment-only": "survived"}, (
        result.stdout[-2000:] + result.stderr[-2000:]
    )
    assert result.returncode == 1  # a survivor fails the run
