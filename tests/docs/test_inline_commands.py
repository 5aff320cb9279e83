"""The `keras-dml ...` commands quoted inline in the documentation's prose are right as written.

The fenced blocks run in `tests/docs/test_commands.py`; commands quoted inside a sentence are not
run (most train for minutes), so what can go stale is checked instead. A complete command must
parse with the CLI's own parser (flags spelled out, sub-commands and registered methods that
exist, required options given). A mention — a command's name (`keras-dml zoo publish`), a flag
(`keras-dml train --strategy`) or an elided command (`keras-dml search ... --save-index DIR`) —
must name a sub-command that exists and flags that its `--help` lists. An inline
`python -m MODULE ...` must name a module that runs as a script.
"""

import contextlib
import importlib.util
import io
import os
import re
import shlex

import pytest

from keras_dml_cli.parser import build_parser
from tests.docs.test_commands import DOCS, ROOT

FENCED = re.compile(r"^```.*?^```", re.S | re.M)
INLINE = re.compile(r"`(keras-dml [^`]*)`")
MODULE = re.compile(r"`python -m ([\w.]+)[^`]*`")


def prose_matches(pattern):
    """One test case per match of `pattern` in the docs' prose (fenced blocks removed), with
    its whitespace collapsed (a span may wrap over lines)."""
    cases = []
    for doc in DOCS:
        with open(os.path.join(ROOT, doc)) as f:
            prose = FENCED.sub("", f.read())
        for span in pattern.findall(prose):
            text = " ".join(span.split())
            cases.append(pytest.param(text, id=f"{doc}:{text}"))
    return cases


def inline_commands():
    return prose_matches(INLINE)


def run_parser(words):
    """`(exit code, output)` of the CLI's parser on `words` (0 and "" when it parses)."""
    # Plugins named in the docs are the reader's own modules: parse without importing them.
    parser = build_parser(None if "--plugin" in words else words)
    output = io.StringIO()
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            parser.parse_args(words)
    except SystemExit as stop:
        return stop.code, output.getvalue()
    return 0, ""


def is_mention(words):
    """A command's name, a flag named in a sentence, or an elided command (`...`)."""
    if "..." in words or "--help" in words or words[-1].startswith("-"):
        return True
    return not any(word.startswith("-") for word in words) and len(words) <= 2


def check_mention(command, words):
    path = []
    for word in words:
        if word.startswith("-") or word == "...":
            break
        path.append(word)
    code, help_text = run_parser(path + ["--help"])
    assert code == 0, f"{command!r}: `keras-dml {' '.join(path)}` is no command:\n{help_text}"
    for flag in (word for word in words if word.startswith("--") and word != "--help"):
        assert re.search(rf"{re.escape(flag)}\b", help_text), (
            f"{command!r}: `keras-dml {' '.join(path)}` has no flag {flag}"
        )


@pytest.mark.parametrize("command", inline_commands())
def test_inline_command_is_right_as_written(command):
    words = shlex.split(command)[1:]
    if is_mention(words):
        check_mention(command, words)
        return
    code, output = run_parser(words)
    assert code == 0, f"{command!r} does not parse:\n{output}"
    assert not unknown_method(words), f"{command!r}: no method {unknown_method(words)!r}"


def unknown_method(words):
    """The `--method` of a `train` command when it is not registered (plugins aside)."""
    if words[0] != "train" or "--plugin" in words or "--method" not in words:
        return None
    from keras_dml.methods import list_methods

    method = words[words.index("--method") + 1]
    return None if method in list_methods() else method


def test_the_docs_quote_commands_and_mentions():
    commands = [case.values[0] for case in inline_commands()]
    words = [shlex.split(command)[1:] for command in commands]
    assert sum(not is_mention(w) for w in words) >= 4
    assert sum(is_mention(w) for w in words) >= 4


def test_a_missing_option_a_bad_flag_and_an_unknown_command_are_caught():
    code, output = run_parser(["train", "--method", "baseline", "--dataset", "digits"])
    assert code == 2 and "--output" in output
    with pytest.raises(AssertionError, match="no flag --stratgy"):
        check_mention("keras-dml train --stratgy", ["train", "--stratgy"])
    with pytest.raises(AssertionError, match="is no command"):
        check_mention("keras-dml zoo publsh", ["zoo", "publsh"])
    assert unknown_method(["train", "--method", "no_such_method", "--output", "runs/x"])
    assert not unknown_method(["train", "--method", "dcml", "--output", "runs/x"])


def inline_modules():
    return prose_matches(MODULE)


def runs_as_a_script(module):
    """Whether `python -m module` runs something: a package with `__main__`, or a module with a
    `__main__` guard."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return False
    if spec.submodule_search_locations is not None:  # a package
        return importlib.util.find_spec(f"{module}.__main__") is not None
    with open(spec.origin) as f:
        return 'if __name__ == "__main__":' in f.read()


@pytest.mark.parametrize("module", inline_modules())
def test_inline_python_module_runs_as_a_script(module):
    assert runs_as_a_script(module), f"`python -m {module}` in the docs runs nothing"


def test_the_docs_quote_modules_and_a_missing_one_is_caught():
    assert {case.values[0] for case in inline_modules()} >= {"keras_dml_cli.catalogue", "pytest"}
    assert not runs_as_a_script("keras_dml.export.no_such_module")
    assert not runs_as_a_script("keras_dml.losses")  # a package without __main__
