"""Apache Beam and pymilvus stay optional: `import keras_dml` imports neither, and a command that
needs a missing one says which extra to install, in one line."""

import os
import subprocess
import sys

from tests.support.no_tensorflow import BLOCKER
from tests.support.paths import REPO_ROOT

# The TensorFlow-free tests' import hook, blocking the two engines instead.
TENSORFLOW = 'name == "tensorflow" or name.startswith("tensorflow.")'
assert TENSORFLOW in BLOCKER
ENGINES = BLOCKER.replace(TENSORFLOW, 'name.split(".")[0] in ("apache_beam", "pymilvus")')


def run(tmp_path, *argv, blocked=True):
    if blocked:
        (tmp_path / "sitecustomize.py").write_text(ENGINES)
    path = f"{tmp_path}{os.pathsep}{REPO_ROOT}" if blocked else REPO_ROOT
    env = {**os.environ, "PYTHONPATH": path, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run(
        [sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


def test_import_keras_dml_imports_no_engine(tmp_path):
    code = "import sys, keras_dml; print(sorted(m for m in sys.modules if m.split('.')[0] in "
    code += "('apache_beam', 'pymilvus')))"
    result = run(tmp_path, "-c", code, blocked=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_a_missing_engine_is_named_with_its_extra_in_one_line(tmp_path):
    embed = ["-m", "keras_dml_cli", "embed", "m.keras", "--images", "photos", "--store", "x.db"]
    search = ["-m", "keras_dml_cli", "search", "m.keras", "--store", "x.db", "--query", "q.png"]
    for argv, extra in ((embed, "beam"), (search, "milvus")):
        result = run(tmp_path, *argv)
        assert result.returncode == 1, result.stderr[-2000:]
        lines = [line for line in result.stderr.splitlines() if line.startswith("keras-dml")]
        assert len(lines) == 1 and f'pip install "keras-dml[{extra}]"' in lines[0], lines
