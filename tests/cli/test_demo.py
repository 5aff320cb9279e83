"""`keras-dml demo` end to end: every method trains, the table is printed, the best is exported."""

import os

import pytest

from keras_dml.demo import demo_config, demo_methods, format_table, run_demo
from keras_dml.methods import list_methods
from tests.support.demo_checks import demo_folder_problems


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
    from keras_dml.demo.progress import DemoProgress

    progress = DemoProgress("dc", index=1, count=6, epochs=8)
    line = progress.line(epoch=1, elapsed=10.0, logs={"val_map@r": 0.5})
    assert line == (
        "[demo] 2 of 6 dc: epoch 2/8, val MAP@R 0.500, 5.0 s/epoch, about 30 s left for dc, "
        "190 s for the demo"
    )


@pytest.mark.slow
def test_demo_trains_compares_and_exports(tmp_path, capsys, monkeypatch):
    # Two methods, one epoch each: the README walk (tests/docs/test_readme_walk.py) runs the
    # README's own `keras-dml demo` with every method and checks its folder the same way.
    methods = ["baseline", "dc"]
    monkeypatch.chdir(tmp_path)  # a relative --output, as the README's
    results = run_demo("demo_output", methods=methods, epochs=1)
    monkeypatch.chdir(tmp_path.parent)  # checked from elsewhere, as the walk does
    assert demo_folder_problems("demo_output", methods, cwd=str(tmp_path)) == []
    assert demo_folder_problems("demo_output", ["baseline"], cwd=str(tmp_path)) != []
    for row in results:
        assert row["report"] == os.path.join(row["run_dir"], "report.html")
    printed = capsys.readouterr().out
    assert "best on validation classes" in printed
    assert "one report per method" in printed
    assert "[demo] 1 of 2 baseline" in printed and "s left for" in printed
    assert ".py:" not in printed  # warnings are printed without source paths


@pytest.mark.slow
def test_demo_runs_twice_in_one_folder(tmp_path):
    # The README runs `keras-dml demo --output demo_output` and later `keras-dml demo
    # --overwrite` (same folder): the second run replaces the first's runs and exports.
    for overwrite in (False, True):
        run_demo(str(tmp_path), methods=["baseline"], epochs=1, verbose=False, overwrite=overwrite)
    assert os.path.isdir(tmp_path / "best_saved_model")
