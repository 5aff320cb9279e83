"""The README's inline `benchmarks/accuracy.py` commands parse and name rows that exist.

Each one trains for an hour or more, so it is not run here (the slow suite runs the script end to
end on digits); what can go stale as written, the flags and the row names, is checked instead.
"""

import os
import re
import shlex

import pytest

from tests.helpers import benchmark_script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# An inline code span, possibly wrapped over lines by the README's line length.
COMMAND = re.compile(r"`(python benchmarks/accuracy\.py[^`]*)`")
PLACEHOLDER = re.compile(r"^[A-Z]+$")  # ROW, DIR: the reader fills them in


def readme_commands():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    return [" ".join(match.split()) for match in COMMAND.findall(text)]


def test_the_readme_quotes_accuracy_commands():
    assert len(readme_commands()) >= 4


@pytest.mark.parametrize("command", readme_commands())
def test_readme_accuracy_command_parses_and_names_known_rows(command):
    accuracy = benchmark_script("accuracy")
    argv = shlex.split(command)[2:]
    args = accuracy.build_parser().parse_args(argv)
    patterns = [p for p in args.rows.split(",") if not PLACEHOLDER.match(p)]
    _, unknown = accuracy.select_rows(accuracy.row_names(args.best_loss), patterns)
    assert not unknown, f"{command!r} names rows that do not exist: {unknown}"


def test_an_unknown_row_is_caught():
    accuracy = benchmark_script("accuracy")
    names = accuracy.row_names("normalized_softmax")
    assert accuracy.select_rows(names, ["bier/proxy_nca", "bier/no_such_loss"])[1] == [
        "bier/no_such_loss"
    ]
