"""`keras-dml demo` end to end: every method trains, the table is printed, the best is exported."""

import json
import os

import numpy as np
import pytest

from keras_dml.demo import demo_config, demo_methods, format_table, run_demo
from keras_dml.training import list_methods


def test_every_demo_method_is_registered_and_configured():
    assert set(demo_methods()) <= set(list_methods())
    assert {"baseline", "dc", "hdc", "bier", "abe", "dcml"} <= set(demo_methods())
    for method in demo_methods():
        config = demo_config(method, epochs=1)
        assert config["method"] == method and config["dataset"] == "digits"
        assert config["epochs"] == 1


def test_format_table_lists_every_method():
    rows = [
        {"method": m, "val_map@r": 0.5, "recall@1": 0.9, "map@r": 0.4, "nmi": 0.3, "seconds": 1.0}
        for m in ("baseline", "dc")
    ]
    lines = format_table(rows).splitlines()
    assert len(lines) == 3 and lines[1].startswith("baseline") and lines[2].startswith("dc")


@pytest.mark.slow
def test_demo_trains_compares_and_exports(tmp_path, capsys):
    # CI's bounded form: one epoch per method (the full demo uses the demo's own budget).
    epochs = 1 if os.environ.get("KERAS_DML_CI_BUDGET") else None
    results = run_demo(str(tmp_path), epochs=epochs)
    assert [r["method"] for r in results] == list(demo_methods())
    for row in results:
        assert 0.0 < row["recall@1"] <= 1.0 and np.isfinite(row["map@r"])
        assert os.path.isfile(os.path.join(row["run_dir"], "model.keras"))
        assert row["report"] == os.path.join(row["run_dir"], "report.html")
        assert os.path.isfile(row["report"])
    summary = json.loads((tmp_path / "results.json").read_text())
    assert summary["best_method"] in demo_methods()
    assert os.path.isdir(summary["exports"]["saved_model"])
    assert os.path.isfile(summary["exports"]["onnx"])
    printed = capsys.readouterr().out
    assert "best on validation classes" in printed
    assert "one report per method" in printed
