"""The benchmark commands the docs (README and site) and the scripts' usage lines quote parse, and
name what exists.

Each one runs for minutes to hours, so it is not run here (the slow suite runs the scripts end to
end in bounded forms); what can go stale as written is checked instead: every flag with the
script's own parser, and the rows, methods and recipes a command names.
"""

import glob
import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.docs.test_commands import SITE_PAGES
from tests.support.docs_site import rendered_markdown
from tests.support.helpers import benchmark_script
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
# An inline code span, possibly wrapped over lines by the README's line length.
README_COMMAND = re.compile(r"`(python\s+-m\s+benchmarks\.[\w.]+[^`]*)`")
# A usage line of a script's docstring, possibly continued with a backslash.
USAGE_COMMAND = re.compile(r"^ *(python -m benchmarks\.[\w.]+(?:[^\n]*\\\n)*[^\n]*)$", re.M)
SCRIPTS = os.path.join(ROOT, "benchmarks", "*", "*.py")  # benchmarks/<group>/<script>.py
INDEX = "benchmarks/README.md"
PLACEHOLDER = re.compile(r"^[A-Z]+$")  # ROW, DIR: the reader fills them in


def readme_commands():
    """Commands quoted by README.md, the benchmarks' index and the site's pages, with their tables
    built (the speed table's commands come from the records benchmarks/results/speed_*.json)."""
    text = ""
    for readme in ("README.md", INDEX):
        with open(os.path.join(ROOT, readme)) as f:
            text += f.read() + "\n"
    text += "\n".join(rendered_markdown(page) for page in SITE_PAGES)
    return [" ".join(match.split()) for match in README_COMMAND.findall(text)]


def usage_commands():
    commands = []
    for path in sorted(glob.glob(SCRIPTS)):
        with open(path) as f:
            text = f.read()
        for match in USAGE_COMMAND.findall(text):
            command = match.replace("\\\n", " ").split("  #")[0]  # drop a trailing comment
            commands.append(" ".join(command.split()))
    return commands


def parse(command):
    """(script module under `benchmarks`, parsed args, the script's module) of a quoted command."""
    words = shlex.split(command)
    name = words[2].removeprefix("benchmarks.")
    module = benchmark_script(name)
    parser = module.build_parser()
    parser.allow_abbrev = False  # a quoted flag is spelled out in full
    try:
        args = parser.parse_args(words[3:])
    except SystemExit:
        pytest.fail(f"{command!r} does not parse with benchmarks.{name}'s options")
    return name, args, module


def unknown_names(name, args):
    """The rows, methods or recipes a parsed command names that do not exist."""
    if name in ("accuracy.run", "accuracy.ensemble_analysis") and args.rows:
        accuracy = benchmark_script("accuracy.run")
        best_loss = getattr(args, "best_loss", accuracy.build_parser().get_default("best_loss"))
        patterns = [p for p in args.rows.split(",") if not PLACEHOLDER.match(p)]
        return accuracy.select_rows(accuracy.row_names(best_loss), patterns)[1]
    if name in ("accuracy.recipes", "speed.distributed_step") and args.methods not in (None, "*"):
        from keras_dml.methods import list_methods

        unknown = [m for m in args.methods.split(",") if m not in list_methods()]
        if name == "accuracy.recipes":
            recipe = os.path.join(ROOT, "recipes", "configs", "{}_" + args.dataset + ".json")
            unknown += [m for m in args.methods.split(",") if not os.path.isfile(recipe.format(m))]
        return unknown
    return []


def test_the_readme_and_the_scripts_quote_commands_of_every_benchmark():
    quoted = {parse(command)[0] for command in readme_commands() + usage_commands()}
    scripts = set()
    for path in glob.glob(SCRIPTS):
        with open(path) as f:
            if "def build_parser" in f.read():
                scripts.add(os.path.relpath(path, os.path.join(ROOT, "benchmarks"))[:-3])
    scripts = {script.replace(os.sep, ".") for script in scripts}
    assert scripts == quoted
    assert len(readme_commands()) >= 15


def test_the_index_has_one_row_per_script_with_its_own_command():
    """benchmarks/README.md: a row per module of each folder, under that folder's heading, whose
    command runs that module (or, for a module other scripts import, the script that uses it)."""
    with open(os.path.join(ROOT, INDEX)) as f:
        sections = re.split(r"^### (\w+)/$", f.read(), flags=re.M)[1:]
    indexed = set()
    for folder, text in zip(sections[::2], sections[1::2]):
        for row in re.findall(r"^\| `(\w+)\.py` \|.*$", text, re.M):
            indexed.add(f"{folder}/{row}.py")
        for command in README_COMMAND.findall(text):
            assert command.split()[2].startswith(f"benchmarks.{folder}."), command
    modules = glob.glob(SCRIPTS)
    expected = {os.path.relpath(p, os.path.join(ROOT, "benchmarks")) for p in modules}
    assert indexed == {p for p in expected if not p.endswith("__init__.py")}


@pytest.mark.parametrize("command", readme_commands() + usage_commands())
def test_benchmark_command_parses_and_names_what_exists(command):
    name, args, _ = parse(command)
    unknown = unknown_names(name, args)
    assert not unknown, f"{command!r} names rows, methods or recipes that do not exist: {unknown}"


def test_a_bad_flag_an_unknown_row_and_a_missing_recipe_are_caught():
    with pytest.raises(pytest.fail.Exception, match="does not parse"):
        parse("python -m benchmarks.methods.bier --image-szie 32")
    with pytest.raises(pytest.fail.Exception, match="does not parse"):
        parse("python -m benchmarks.speed.evaluation --skip-naiv")
    name, args, _ = parse(
        "python -m benchmarks.accuracy.run --rows bier/proxy_nca,bier/no_such_loss"
    )
    assert unknown_names(name, args) == ["bier/no_such_loss"]
    name, args, _ = parse("python -m benchmarks.accuracy.ensemble_analysis --rows dc/bestt")
    assert unknown_names(name, args) == ["dc/bestt"]
    name, args, _ = parse(
        "python -m benchmarks.accuracy.recipes --dataset digits --methods baseline,dc"
    )
    assert unknown_names(name, args) == ["dc"]  # no dc_digits.json
    name, args, _ = parse("python -m benchmarks.speed.distributed_step --methods baseline,bierr")
    assert unknown_names(name, args) == ["bierr"]


def test_recipes_refuses_a_named_method_without_a_recipe(capsys):
    """`--methods dc` on a dataset without `dc_<dataset>.json` is an error, not a shorter table."""
    with pytest.raises(SystemExit) as stop:
        benchmark_script("accuracy.recipes").main(["--dataset", "digits", "--methods", "dc"])
    assert stop.value.code == 2
    assert "no recipe" in capsys.readouterr().err


# Scripts that only read the records in benchmarks/results/ and print a table: seconds, so the
# documented commands of these run as written rather than being parsed only.
RECORD_TABLES = ("accuracy.reality_check_table", "accuracy.runtime_pairs")


@pytest.mark.parametrize(
    "command",
    sorted(
        {
            command
            for command in readme_commands()
            if parse(command)[0] in RECORD_TABLES and "runs/" not in command
        }
    ),
)
def test_documented_record_table_commands_run_as_written(command):
    result = subprocess.run(
        [sys.executable, *shlex.split(command)[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[0].startswith(("loss ", "row ")), result.stdout[:500]
