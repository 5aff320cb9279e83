"""The "Pictures and reports" page (docs/reports.md): its commands run, its images are there and
small."""

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def section():
    with open(os.path.join(ROOT, "docs", "reports.md"), encoding="utf-8") as f:
        return f.read()


def commands():
    blocks = re.findall(r"```bash\n(.*?)```", section(), re.S)
    return [line for block in blocks for line in block.replace("\\\n", " ").strip().splitlines()]


def test_readme_images_exist_are_small_pngs():
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", section())
    assert images == ["images/retrieval_grid.png", "images/projection.png"]
    for image in images:
        path = os.path.join(ROOT, "docs", image)  # relative to the page
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
        assert os.path.getsize(path) < 100 * 1024, image
    assert any("docs/make_images.py --output docs/images" in c for c in commands())


@pytest.mark.slow
def test_readme_picture_commands_run(tmp_path):
    """Runs the section's commands as written, in a scratch folder; under KERAS_DML_CI_BUDGET
    with 1 epoch. The image script writes into the scratch folder, not over docs/images."""
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "2"}
    budget = bool(os.environ.get("KERAS_DML_CI_BUDGET"))
    for command in commands():
        argv = shlex.split(command)
        if budget and "--epochs" in argv:
            argv[argv.index("--epochs") + 1] = "1"
        if argv[0] == "keras-dml":
            argv = [sys.executable, "-m", "keras_dml_cli", *argv[1:]]
        elif argv[:2] == ["python", "docs/make_images.py"]:
            argv = [sys.executable, os.path.join(ROOT, "docs", "make_images.py"), *argv[2:]]
        result = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
        )
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    run = tmp_path / "runs" / "bier_digits"
    assert (run / "report.html").is_file() and (run / "model.keras").is_file()
    for name in ("retrieval_grid.png", "projection.png"):
        assert (tmp_path / "docs" / "images" / name).stat().st_size > 1000
