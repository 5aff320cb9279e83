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
    # Validation and test columns are labelled as such (the second MAP@R column was not).
    assert lines[0].split() == [
        "method",
        "val",
        "MAP@R",
        "test",
        "R@1",
        "test",
        "MAP@R",
        "test",
        "NMI",
        "time",
    ]


def test_demo_progress_line_counts_methods_epochs_and_time_left():
    from keras_dml.demo_progress import DemoProgress

    progress = DemoProgress("dc", index=1, count=6, epochs=8)
    line = progress.line(epoch=1, elapsed=10.0, logs={"val_map@r": 0.5})
    assert line == (
        "[demo] 2 of 6 dc: epoch 2/8, val MAP@R 0.500, 5.0 s/epoch, about 30 s left for dc, "
        "190 s for the demo"
    )


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
    assert f"[demo] 1 of {len(demo_methods())}" in printed and "s left for" in printed
    assert ".py:" not in printed  # warnings are printed without source paths
    for row in results:
        with open(os.path.join(row["run_dir"], "history.json")) as f:
            assert row["val_map@r"] == max(json.load(f)["val_map@r"])


@pytest.mark.slow
def test_demo_runs_twice_in_one_folder(tmp_path):
    # The README runs `keras-dml demo --output demo_output` and later `keras-dml demo
    # --overwrite` (same folder): the second run replaces the first's runs and exports.
    for overwrite in (False, True):
        run_demo(str(tmp_path), methods=["baseline"], epochs=1, verbose=False, overwrite=overwrite)
    assert os.path.isdir(tmp_path / "best_saved_model")
