"""The `keras-dml` command end to end on the embedded digits data."""

import json
import os
import re
import subprocess
import sys

import pytest

from keras_dml_cli import main
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def test_train_then_evaluate_on_digits(tmp_path, capsys):
    run = tmp_path / "run"
    code = main(
        [
            "train",
            "--method",
            "baseline",
            "--dataset",
            "digits",
            "--backbone",
            "convnet",
            "--epochs",
            "1",
            "--batch-size",
            "32",
            "--m-per-class",
            "8",
            "--embedding-dim",
            "32",
            "--output",
            str(run),
            "--quiet",
        ]
    )
    assert code == 0
    for name in ("model.keras", "history.json", "metrics.json", "config.json", "report.html"):
        assert (run / name).is_file(), name
    metrics = json.loads((run / "metrics.json").read_text())
    assert 0.0 < metrics["recall@1"] <= 1.0 and metrics["split"] == "test"
    history = json.loads((run / "history.json").read_text())
    assert len(history["loss"]) == 1 and "val_recall@1" in history
    capsys.readouterr()

    code = main(["evaluate", str(run / "model.keras"), "--dataset", "digits", "--json"])
    assert code == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    # The same model on the same split gives the same metrics as the training run recorded.
    assert printed["recall@1"] == pytest.approx(metrics["recall@1"], abs=1e-6)
    assert printed["map@r"] == pytest.approx(metrics["map@r"], abs=1e-6)


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["train", "--method", "baseline", "--dataset", "nope", "--output", "x"],
            "Unknown dataset",
        ),
        (["train", "--method", "dcc", "--dataset", "digits", "--output", "x"], "Did you mean 'dc'"),
        (
            [
                "train",
                "--method",
                "baseline",
                "--dataset",
                "digits",
                "--backbone",
                "resnet5",
                "--output",
                "x",
            ],
            "resnet50",
        ),
        (
            [
                "train",
                "--method",
                "baseline",
                "--dataset",
                "cub200",
                "--data-dir",
                "/nonexistent",
                "--output",
                "x",
            ],
            "cub200",
        ),
        (["evaluate", "/nonexistent/model.keras", "--dataset", "digits"], "nonexistent"),
        (["train", "--config", "/nonexistent.json", "--output", "x"], "No configuration file"),
    ],
)
def test_errors_are_one_line_messages(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("keras-dml: error:") and message in err
    assert "Traceback" not in err


def test_console_script_help_lists_commands():
    out = subprocess.run(
        [sys.executable, "-m", "keras_dml_cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for command in ("train", "evaluate", "demo", "export", "zoo"):
        assert command in out


@pytest.mark.slow
def test_readme_quick_start_runs(tmp_path, monkeypatch):
    """The quick start's Keras script (docs/index.md) runs as written (in a scratch folder)."""
    with open(os.path.join(ROOT, "docs", "index.md")) as f:
        page = f.read()
    quick_start = page.split("## Quick start: a Keras script", 1)[1]
    code = re.search(r"```python\n(.*?)```", quick_start, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README quick start", "exec"), {"__name__": "__readme__"})
    runs = tmp_path / "runs"  # everything the README writes goes under the git-ignored runs/
    assert (runs / "dc_digits.keras").is_file() and (runs / "dc_digits.onnx").is_file()
