"""Each `keras-dml` sub-command runs from its module under `keras_dml_cli.run`.

The parser and the early checks import no Keras: a misspelt name or an impossible option
combination answers before the run module (and TensorFlow) loads; the checks that need the
library (a rerank option, the demo's folder) answer in one line after it loads.
"""

import json
import os
import subprocess
import sys

from keras_dml_cli.dispatch import EARLY_CHECKS, RUNS
from keras_dml_cli.parser import build_parser
from tests.support.paths import REPO_ROOT

# Runs each command line through `main` in one fresh process: exit code, error, heavy imports.
SCRIPT = """
import contextlib, io, json, sys
from keras_dml_cli import main
answers = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    heavy = sorted(name for name in ("tensorflow", "keras") if name in sys.modules)
    answers.append([code, err.getvalue().strip(), heavy])
print(json.dumps(answers))
"""


def test_every_sub_command_has_a_run():
    subparsers = build_parser()._subparsers._group_actions[0]
    assert set(RUNS) == set(subparsers.choices)
    assert set(EARLY_CHECKS) <= set(RUNS)


def test_refused_arguments_answer_before_keras_loads(tmp_path):
    lines = {
        "--input-dtype both is for SavedModel only": [
            *("export", "m.keras", "--format", "onnx", "--input-dtype", "both"),
            *("--output", str(tmp_path / "m.onnx")),
        ],
        "Unknown rerank 'aqee'": ["evaluate", "m.keras", "--dataset", "digits", "--rerank", "aqee"],
        "Unknown method 'dcc'": ["train", "--method", "dcc", "--output", "x"],
    }
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(list(lines.values()))],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": REPO_ROOT},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    answers = json.loads(result.stdout.strip().splitlines()[-1])
    for message, (code, err, heavy) in zip(lines, answers):
        assert code == 1 and err.startswith("keras-dml: error:") and message in err, err
        assert heavy == [], f"{message!r} answered after importing {heavy}"


def test_refusals_that_need_the_library_are_one_line(tmp_path, capsys):
    from keras_dml_cli import main

    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    search = ["search", "m.keras", "--gallery", "g", "--query", "q"]
    for argv, message in [
        ([*search, "--rerank", "dba", "--rerank-option", "kk=3"], "Unknown option(s) ['kk']"),
        (["demo", "--output", str(a_file)], "is a file, not a folder"),
    ]:
        assert main(argv) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("keras-dml: error:") and message in err and "\n" not in err, err
