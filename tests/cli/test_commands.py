"""Each `keras-dml` sub-command runs from the module `keras_dml.cli.commands` names (issue 30).

The parser and the early checks import no Keras; a refused argument must answer before the run
module (and TensorFlow) loads, and every named entry point must exist.
"""

import json
import os
import subprocess
import sys

from keras_dml.cli.commands import COMMANDS, load_entry_point
from keras_dml.cli.parser import build_parser
from tests.support.paths import REPO_ROOT

# Runs each command line through `main` in one fresh process: exit code, error, heavy imports.
SCRIPT = """
import contextlib, io, json, sys
from keras_dml.cli import main
answers = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    heavy = sorted(name for name in ("tensorflow", "keras") if name in sys.modules)
    answers.append([code, err.getvalue().strip(), heavy])
print(json.dumps(answers))
"""


def test_every_sub_command_has_a_run_and_checks_that_load():
    subparsers = build_parser()._subparsers._group_actions[0]
    assert set(COMMANDS) == set(subparsers.choices)
    for check, run in COMMANDS.values():
        assert callable(load_entry_point(run))
        assert check is None or callable(load_entry_point(check))


def test_refused_arguments_answer_before_keras_loads(tmp_path):
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    lines = {
        "--input-dtype both is for SavedModel only": [
            *("export", "m.keras", "--format", "onnx", "--input-dtype", "both"),
            *("--output", str(tmp_path / "m.onnx")),
        ],
        "Unknown rerank 'aqee'": ["evaluate", "m.keras", "--dataset", "digits", "--rerank", "aqee"],
        "Unknown option(s) ['kk'] for rerank='dba'": [
            *("search", "m.keras", "--gallery", "g", "--query", "q"),
            *("--rerank", "dba", "--rerank-option", "kk=3"),
        ],
        "is a file, not a folder": ["demo", "--output", str(a_file)],
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
