"""Every `bash` command and `python` block of the documentation runs as written.

The blocks are extracted from README.md, CONTRIBUTING.md, deployment/README.md, model_zoo/README.md
and every page of the documentation site (`docs/**/*.md`, in `mkdocs.yml`'s nav order), so a new
documented line is tested the day it is written. The README's and the site's blocks (`WALKED`) run
in `tests/docs/test_readme_walk.py` (slow suite), top to bottom in a fresh copy; the other
documents' blocks run here, and the checks below cover every document. The blocks of one document
run in order in one temporary folder (with `recipes/`, `deployment/` and `model_zoo/` linked in, as
in a checkout). Training commands get one epoch (`--epochs 1`, `--set epochs=1`) to stay bounded and
blocks that train run in the slow suite; `pip install` lines are checked against the extras of
`pyproject.toml` instead of being run, `apt-get install` lines are checked to be installed (the
block is skipped when they are not), and test commands (`python -m pytest ...`, also behind
environment assignments such as `KERAS_BACKEND=jax`) are checked to be ones `.ci/run` runs rather
than run recursively.
"""

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def site_pages():
    """The pages of the documentation site, `docs/...md`, in the order of `mkdocs.yml`'s nav."""
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        return tuple(
            f"docs/{page}" for page in re.findall(r"^\s*- (?:[^:\n]+: )?(\S+\.md)$", f.read(), re.M)
        )


SITE_PAGES = site_pages()
DOCS = ("README.md", "CONTRIBUTING.md", "deployment/README.md", "model_zoo/README.md", *SITE_PAGES)
LINKED = ("recipes", "deployment", "model_zoo")
# Docs walked top to bottom, verbatim, in a fresh copy (tests/docs/test_readme_walk.py, slow): the
# README, then the site's pages in nav order. Their blocks run there only, once, in order and with
# nothing prepared, instead of a second time here (CI ran both: about 5 minutes of its time twice).
WALKED = ("README.md", *SITE_PAGES)
TIMEOUT = 900
# A block is slow when it trains or runs the demo.
SLOW_MARKERS = (
    "keras-dml train",
    "keras-dml demo",
    "recipes/train.py",
    "model.fit(",
    "docs/make_images.py",
    "runs/baseline/model.keras",  # uses the model an earlier (slow) block trained
    "runs/dc_mirrored/model.keras",
)


def fenced_blocks(doc):
    """`(language, first line number, text)` of every fenced block of `doc`."""
    blocks, language, start, lines = [], None, 0, []
    with open(os.path.join(ROOT, doc)) as f:
        for number, line in enumerate(f, 1):
            fence = re.match(r"^```(\w*)\s*$", line)
            if fence and language is None:
                language, start, lines = fence.group(1), number, []
            elif line.startswith("```") and language is not None:
                blocks.append((language, start, "".join(lines)))
                language = None
            elif language is not None:
                lines.append(line)
    return blocks


def runnable_blocks():
    cases = []
    for doc in DOCS:
        for language, line, text in fenced_blocks(doc):
            if language not in ("bash", "python"):
                continue
            if doc in WALKED:
                continue  # run in order, with what came before, by test_readme_walk.py
            slow = any(marker in text for marker in SLOW_MARKERS)
            marks = [pytest.mark.slow] if slow else []
            cases.append(pytest.param(language, text, id=f"{doc}:{line}", marks=marks))
    return cases


def bash_commands(text):
    """The commands of a bash block: continuation lines joined, comments dropped, `&&` split."""
    joined = re.sub(r"\\\n\s*", " ", text)
    commands = []
    for line in joined.splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith("#"):
            commands += [part.strip() for part in line.split("&&")]
    return commands


# Under the CI budget (KERAS_DML_CI_BUDGET) a Fashion-MNIST recipe trains on 500 images per class:
# one epoch over all 36,000 training images took minutes (the walk's longest steps).
FASHION_MNIST_CAP = ["--set", "dataset_options.max_per_class=500"]


def bounded(argv):
    """`argv` with the bounds of a test run: one epoch for training and the demo, and under the
    CI budget a capped Fashion-MNIST training set (`FASHION_MNIST_CAP`)."""
    if argv and re.match(r"^[A-Z_][A-Z0-9_]*=", argv[0]):
        return [argv[0], *bounded(argv[1:])]
    cap = []
    if os.environ.get("KERAS_DML_CI_BUDGET") and any("fashion_mnist" in word for word in argv):
        cap = FASHION_MNIST_CAP
    if argv[:2] == ["keras-dml", "train"]:
        return [*argv, "--epochs", "1", *cap]
    if argv[:2] == ["keras-dml", "demo"]:
        return [*argv, "--epochs", "1"]
    if argv[:2] == ["python", "recipes/train.py"]:
        return [*argv, "--set", "epochs=1", *cap]
    return argv


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def check_pip_install(argv):
    """The extras a documented `pip install` names exist in pyproject.toml."""
    section = read("pyproject.toml").split("[project.optional-dependencies]")[1].split("\n[")[0]
    extras = set(re.findall(r"^([\w-]+) = \[", section, re.M))
    for target in argv[2:]:
        for group in re.findall(r"\[([\w,\-]+)\]", target):
            for extra in group.split(","):
                assert extra in extras, f"{' '.join(argv)}: pyproject.toml has no extra {extra!r}"


def check_test_command(command):
    ci = read(".ci/run").replace("pip install -q", "pip install")
    lines = {line.strip() for line in ci.splitlines()}
    assert command in lines, f"The documented test command is not a line of .ci/run: {command!r}"


def apt_packages(argv):
    """The packages of an `apt-get install ...` command line."""
    return [word for word in argv[2:] if not word.startswith("-")]


def check_apt_install(argv):
    """A documented `apt-get install` is not run (it needs root and the network): its packages
    must be installed already (`.ci/run` installs them), or the test is skipped naming them."""
    packages = apt_packages(argv)
    missing = [
        p for p in packages if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode
    ]
    if missing:
        pytest.skip(f"not installed: {' '.join(missing)} (run `{' '.join(argv)}` as root)")
    return packages


def with_assignments(argv, env):
    """`(argv, env)` with leading `NAME=VALUE` words moved into the environment, as bash does."""
    env = dict(env)
    while argv and re.match(r"^[A-Z_][A-Z0-9_]*=", argv[0]):
        name, value = argv[0].split("=", 1)
        env[name] = value
        argv = argv[1:]
    return argv, env


def run(argv, cwd, env):
    argv, env = with_assignments(argv, env)
    if env.get("KERAS_BACKEND", "tensorflow") != "tensorflow":
        pytest.importorskip(env["KERAS_BACKEND"])  # the `backends` extra is not in `dev`
    executable = {"keras-dml": [sys.executable, "-m", "keras_dml_cli"], "python": [sys.executable]}
    argv = executable.get(argv[0], [argv[0]]) + argv[1:]
    if argv[0] == "ruff":
        cwd = ROOT  # linting the checkout, as the README's command does from its root
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, (
        f"{' '.join(argv)}\n{result.stdout[-3000:]}{result.stderr[-3000:]}"
    )


FOLDERS = {}


@pytest.fixture
def workdir(request, tmp_path_factory):
    """One folder per document: its blocks run in order and build on each other's files."""
    doc = request.node.callspec.id.split(":")[0]
    if doc not in FOLDERS:
        FOLDERS[doc] = _make_workdir(tmp_path_factory.mktemp("docs"))
    return FOLDERS[doc]


def _make_workdir(tmp_path):
    for name in LINKED:
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    # The image script runs from a copy of `docs/` without its images, so a test run never
    # rewrites the committed pictures.
    (tmp_path / "docs").mkdir()
    os.symlink(os.path.join(ROOT, "docs", "make_images.py"), tmp_path / "docs" / "make_images.py")
    # The images the ONNX client example embeds and queries (your own photos in real use); the
    # README writes its own search gallery.
    rng = np.random.default_rng(0)
    (tmp_path / "photos").mkdir()
    for i in range(4):
        pixels = rng.integers(0, 256, size=(40, 48, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(tmp_path / "photos" / f"{i}.png")
    Image.fromarray(rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8)).save(tmp_path / "q.jpg")
    env = {**os.environ, "PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "2"}
    return tmp_path, env


@pytest.mark.parametrize("language, text", runnable_blocks())
def test_documented_block_runs(language, text, workdir):
    cwd, env = workdir
    if language == "python":
        result = subprocess.run(
            [sys.executable, "-c", text],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return
    for command in bash_commands(text):
        argv = shlex.split(command)
        program, _ = with_assignments(argv, {})
        if program[:2] == ["pip", "install"]:
            check_pip_install(program)
        elif program[:2] == ["apt-get", "install"]:
            check_apt_install(program)
        elif program[:3] == ["python", "-m", "pytest"]:
            # The whole documented line (a README chain `pip ... && python -m pytest`) is a
            # line of .ci/run, so CI runs exactly what the docs say.
            check_test_command(next(line for line in text.splitlines() if command in line).strip())
        else:
            run(bounded(argv), cwd, env)


def test_untyped_blocks_hold_no_runnable_command():
    """Commands outside `bash` blocks would escape this test: only synopses may be untyped."""
    for doc in DOCS:
        for language, line, text in fenced_blocks(doc):
            if language in ("bash", "python", "json"):
                continue
            for command in text.splitlines():
                if not command.startswith(("keras-dml ", "python ")):
                    continue
                synopsis = re.search(r"\[|\||\b[A-Z][A-Z_]+\b", command)
                benchmark = command.startswith("python -m benchmarks.")
                assert synopsis or benchmark, f"{doc}:{line}: untyped runnable line {command!r}"


def test_environment_assignments_prefix_a_command():
    argv = ["KERAS_BACKEND=jax", "A_1=x=y", "python", "-m", "pytest"]
    assert with_assignments(argv, {"B": "1"}) == (
        ["python", "-m", "pytest"],
        {"B": "1", "KERAS_BACKEND": "jax", "A_1": "x=y"},
    )
    assert with_assignments(["python", "--flag=1"], {}) == (["python", "--flag=1"], {})


def test_every_doc_has_been_scanned():
    assert sum(1 for _ in runnable_blocks()) >= 5
    # Each document the walk does not follow contributes runnable blocks here, the walked ones
    # (README.md and the site's pages) run in test_readme_walk.py only, and no Markdown file of
    # the checkout with a `bash` or `python` block is left out of DOCS.
    scanned = {param.id.split(":")[0] for param in runnable_blocks()}
    assert scanned == set(DOCS) - set(WALKED)
    assert set(WALKED) <= set(DOCS)
    assert {"docs/index.md", "docs/search.md", "docs/losses.md"} <= set(SITE_PAGES)
    with_blocks = set()
    for folder, subfolders, files in os.walk(ROOT):
        skipped = ("node_modules", "build", "dist", "venv", "runs", "demo_output", "site")
        subfolders[:] = [
            d
            for d in subfolders
            if not d.startswith(".")
            and d not in skipped
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))  # a virtual env
        ]
        for name in files:
            if name.endswith(".md"):
                path = os.path.relpath(os.path.join(folder, name), ROOT)
                if any(language in ("bash", "python") for language, _, _ in fenced_blocks(path)):
                    with_blocks.add(path)
    assert with_blocks <= set(DOCS), sorted(with_blocks - set(DOCS))


def json_blocks():
    return [
        pytest.param(text, id=f"{doc}:{line}")
        for doc in DOCS
        for language, line, text in fenced_blocks(doc)
        if language == "json"
    ]


@pytest.mark.parametrize("text", json_blocks())
def test_documented_json_is_valid_for_what_it_shows(text):
    """A documented `json` block parses, and is valid for the reader that takes it: a model card
    passes the card schema (its placeholder sha256 filled in) and the commands it quotes parse
    as `keras-dml` command lines; a `TF_CONFIG` passes the multi-worker check."""
    from keras_dml.training.strategy import check_tf_config
    from keras_dml.zoo.schema import validate_card
    from keras_dml_cli.parser import build_parser

    data = json.loads(text)
    if "schema_version" in data:
        for entry in data.get("files", []):
            entry["sha256"] = "0" * 64  # the README shows "<64 lowercase hex digits>"
        validate_card(data, source="documented card")
        assert os.path.exists(os.path.join(ROOT, data["training"]["recipe"])), data["training"]
        for section in ("training", "metrics"):
            command = data[section].get("command", "")
            if command.startswith("keras-dml "):
                argv = shlex.split(command)[1:]
                build_parser(argv).parse_args(argv)
            elif command.startswith("python recipes/train.py "):
                check_recipe_command(command)
            elif command:
                pytest.fail(f"no check for the card's {section} command: {command!r}")
    elif "cluster" in data:
        check_tf_config(text)
    else:
        pytest.fail(f"no check for this documented JSON: {text[:80]!r}")


def check_recipe_command(command):
    """A `python recipes/train.py ...` command parses with the script's parser (no
    abbreviations) and its `--config` recipe exists."""
    spec = importlib.util.spec_from_file_location("train_script", f"{ROOT}/recipes/train.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    args = script.build_parser().parse_args(shlex.split(command)[2:])
    assert os.path.exists(os.path.join(ROOT, args.config)), f"{command!r}: no {args.config}"


def test_train_script_usage_lines_parse():
    """The usage lines of `recipes/train.py`'s docstring (a line may continue with `\\`)."""
    with open(os.path.join(ROOT, "recipes", "train.py")) as f:
        text = f.read().replace("\\\n", " ")
    commands = re.findall(r"^ *(python recipes/train\.py [^\n]*)$", text, re.M)
    assert len(commands) >= 2
    for command in commands:
        check_recipe_command(command)


def test_a_recipe_command_with_a_missing_recipe_or_a_bad_flag_is_caught():
    good = "python recipes/train.py --config recipes/configs/dc_cub200.json --output runs/x"
    check_recipe_command(good)
    with pytest.raises(AssertionError, match="no recipes/configs/dc_cub.json"):
        check_recipe_command(good.replace("dc_cub200", "dc_cub"))
    with pytest.raises(SystemExit):
        check_recipe_command(good.replace("--output", "--out"))


def test_every_json_block_is_checked():
    assert len(json_blocks()) >= 2


def test_fashion_mnist_training_is_capped_under_the_ci_budget_only(monkeypatch):
    command = ["python", "recipes/train.py", "--config", "recipes/configs/dc_fashion_mnist.json"]
    monkeypatch.delenv("KERAS_DML_CI_BUDGET", raising=False)
    assert bounded(command) == [*command, "--set", "epochs=1"]
    monkeypatch.setenv("KERAS_DML_CI_BUDGET", "1")
    assert bounded(command) == [*command, "--set", "epochs=1", *FASHION_MNIST_CAP]
    digits = ["keras-dml", "train", "--method", "dc", "--dataset", "digits", "--output", "x"]
    assert bounded(digits) == [*digits, "--epochs", "1"]
