"""The mutation catalogue matches the code: each original text occurs once, each test exists.

Static checks only (nothing is mutated or run); `python -m tests.mutations.run` runs the
mutations themselves (see CONTRIBUTING.md).
"""

import json
import pathlib

import pytest

from tests.mutations.catalogue import (
    CATALOGUE,
    load_catalogue,
    missing_node_reason,
    stale_reason,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
RECORDS = load_catalogue()


def test_catalogue_is_large_and_covers_every_method_and_part():
    assert len(RECORDS) >= 40
    files = {record["file"] for record in RECORDS}
    for part in (
        "keras_dml/models/bier/",
        "keras_dml/models/divide_and_conquer/",
        "keras_dml/models/division/",
        "keras_dml/models/hierarchical_divide_and_conquer/",
        "keras_dml/models/dcml/",
        "keras_dml/models/abe/",
        "keras_dml/layers/",
        "keras_dml/losses/",
        "keras_dml/evaluation/",
        "keras_dml/data/samplers/",
        "training/configs/",
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


def test_static_checks_catch_stale_entries_and_unknown_nodes(tmp_path):
    record = dict(RECORDS[0])
    assert "occurs 0 times" in stale_reason({**record, "original": "no such text\n"}, ROOT)
    node = "tests/test_mutations_catalogue.py::test_original_text_occurs_exactly_once"
    assert missing_node_reason(node, ROOT) is None
    assert missing_node_reason(node + "_typo", ROOT) is not None
    assert missing_node_reason(node + "[bier-shrinkage-rates]", ROOT) is not None
    assert missing_node_reason("tests/test_no_such_file.py::test_x", ROOT) is not None
    repeated = tmp_path / "catalogue.json"
    repeated.write_text(json.dumps([RECORDS[0], RECORDS[0]]))
    with pytest.raises(ValueError, match="repeated"):
        load_catalogue(repeated)
    assert CATALOGUE.is_file()
