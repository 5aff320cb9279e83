"""README.md and the documentation site followed top to bottom, verbatim, in a fresh copy of the
repository.

`tests/docs/test_commands.py` runs each block of the docs in a prepared folder (the repository's
folders linked in, images for the ONNX client example). This walk prepares nothing: it
copies the tracked files into an empty folder, makes it a git repository, and runs every `bash`
command and `python` block of README.md and then of the site's pages (`WALKED`: `mkdocs.yml`'s
nav order) in order there, as a reader would, so an example that uses a file no earlier command
makes, or a system package the docs name only later, fails here. It takes the bounds of the
docs test (`bounded`: one epoch per training command) and `KERAS_DML_CI_BUDGET=1` (the
picture script's small run). Exceptions, as in the docs test:
`pip install` lines are checked against `pyproject.toml`'s extras (the test runs in the installed
environment) and the test command is checked to be a line of `.ci/run` instead of running the
suite inside itself; an `apt-get install` line is checked to be installed (the walk is skipped,
naming the line, where it is not); a command for a Keras backend that is not installed is
skipped and reported (the `backends` extra is not in `dev`). After the walk, nothing the docs
wrote may show in `git status` but the pictures its picture command regenerates.
"""

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import warnings

import pytest

from keras_dml.data.datasets import kanji
from tests.docs.test_commands import (
    WALKED,
    apt_packages,
    bash_commands,
    bounded,
    check_apt_install,
    check_pip_install,
    check_test_command,
    fenced_blocks,
    with_assignments,
)
from tests.support.demo_checks import demo_folder_problems
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
TIMEOUT = 900
# Tracked files the README's commands rewrite on purpose: `python docs/make_images.py --output
# docs/images` (docs/reports.md) regenerates the site's two pictures.
REGENERATED = {"docs/images/retrieval_grid.png", "docs/images/projection.png"}
# Data that comes from a system package: the dataset name a command or its `--config` recipe
# names, and the Debian packages it needs.
SYSTEM_DATA = {
    "fashion_mnist": ("dataset-fashion-mnist",),
    "hangul": ("fonts-nanum", "fonts-unfonts-core", "fonts-unfonts-extra", "fonts-baekmuk"),
    "kanji": kanji.APT_PACKAGES,
}


def readme_steps(root):
    """`("doc:line", "bash" | "python", command or block text)` of the walked docs (`WALKED`:
    README.md, then the site's pages) under `root`, in order."""
    steps = []
    for doc in WALKED:
        # An absolute path: the copy's.
        for language, line, text in fenced_blocks(os.path.join(root, doc)):
            if language == "python":
                steps.append((f"{doc}:{line}", language, text))
            elif language == "bash":
                steps += [(f"{doc}:{line}", language, command) for command in bash_commands(text)]
    return steps


def fresh_copy(destination):
    """The tracked files of the working tree (as edited, not as committed) in a new git
    repository at `destination`, committed, so `git status` there shows what a walk wrote."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for path in filter(None, listed.split("\0")):
        source = os.path.join(ROOT, path)
        if os.path.isfile(source):  # a tracked file deleted in the working tree is left out
            os.makedirs(os.path.join(destination, os.path.dirname(path)), exist_ok=True)
            shutil.copy2(source, os.path.join(destination, path))
    identity = ["-c", "user.name=readme walk", "-c", "user.email=walk@localhost"]
    for command in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", "copy"]):
        subprocess.run(["git", *command], cwd=destination, check=True, capture_output=True)


def system_packages_absent(text, cwd, installed):
    """Debian packages of `SYSTEM_DATA` that a step uses (the data is named in its text or in
    the recipe its `--config` names) and that are not in `installed`, sorted."""
    texts = [text]
    match = re.search(r"--config[ =](\S+)", text)
    if match and os.path.isfile(os.path.join(cwd, match.group(1))):
        with open(os.path.join(cwd, match.group(1))) as f:
            texts.append(f.read())
    needed = {
        p
        for name, packages in SYSTEM_DATA.items()
        if any(name in t for t in texts)
        for p in packages
    }
    return sorted(needed - set(installed))


# Pages whose steps need an optional engine: without it the walk skips and reports them. .ci/run
# installs Apache Beam in its own virtual env, which runs the page (tests/pipelines).
ENGINE_PAGES = {"docs/scale_out.md": "apache_beam"}


def engine_missing(line):
    """The engine a step of `line` ("doc:line") needs when it is not installed, else `None`."""
    engine = ENGINE_PAGES.get(line.split(":")[0])
    return engine if engine and importlib.util.find_spec(engine) is None else None


def backend_missing(env):
    """The Keras backend a step's environment names, when it is not installed, else `None`."""
    backend = env.get("KERAS_BACKEND", "tensorflow")
    if backend == "tensorflow":
        return None
    return None if importlib.util.find_spec(backend) else backend


def run_step(language, text, cwd, env):
    """Runs one step in `cwd`; returns `None` on success, else the end of its output."""
    if language == "python":
        argv = [sys.executable, "-c", text]
    else:
        argv, env = with_assignments(bounded(shlex.split(text)), env)
        executable = {"keras-dml": [sys.executable, "-m", "keras_dml_cli"]}
        executable["python"] = [sys.executable]
        argv = executable.get(argv[0], [argv[0]]) + argv[1:]
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    if result.returncode == 0:
        return None
    return (result.stdout[-1500:] + result.stderr[-1500:]).strip()


def walk(cwd, env, timings=None):
    """Follows README.md and the site's pages in `cwd`. Returns `(failures, skipped)`: one line
    per step that failed (doc and line, step, why) and per command skipped for a missing
    backend. `timings`, a list, receives `(seconds, step)` for each step run."""
    failures, skipped, installed = [], [], set()
    for line, language, text in readme_steps(str(cwd)):
        where = f"{line} {text.strip().splitlines()[0][:100]!r}"
        argv, step_env = (
            with_assignments(shlex.split(text), env) if language == "bash" else ([], env)
        )
        if argv[:2] == ["pip", "install"]:
            check_pip_install(argv)
            continue
        if argv[:3] == ["python", "-m", "pytest"]:
            doc = (cwd / line.split(":")[0]).read_text().splitlines()
            check_test_command(next(li for li in doc if text in li).strip())
            continue
        if argv[:2] == ["apt-get", "install"]:
            installed.update(check_apt_install(argv))
            continue
        absent = system_packages_absent(text, cwd, installed)
        if absent:
            failures.append(f"{where}: needs {absent}, which no earlier line of the docs installs")
            continue
        if engine_missing(line):
            skipped.append(f"{where} ({engine_missing(line)} not installed)")
            continue
        if backend_missing(step_env):
            skipped.append(f"{where} (backend {backend_missing(step_env)} not installed)")
            continue
        start = time.perf_counter()
        error = run_step(language, text, cwd, env)
        if timings is not None:
            timings.append((time.perf_counter() - start, where))
        if error is not None:
            failures.append(f"{where}: failed:\n{error}")
    return failures, skipped


def left_behind(cwd):
    """Lines of `git status --porcelain` in `cwd` other than the pictures the README
    regenerates: files the README's commands wrote outside `.gitignore`."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [line for line in status if not (line[:2] == " M" and line[3:] in REGENERATED)]


# Embedding sizes the walked docs quote for settings one of their commands also trains: the quote
# (its size the group) and the run folder of the docs' command with those settings.
QUOTED_SIZES = {
    # `keras-dml train --method baseline --dataset digits ... --output runs/baseline` sets
    # nothing about the model, as the accuracy benchmark's `defaults` row.
    r"the library's defaults: `vgg_small`, normalised softmax, (\d+)-d": "runs/baseline",
    # The Fashion-MNIST recipes' budget; docs/cli.md trains the D&C recipe into runs/dc_fmnist.
    r"recipe with one shared budget: convnet at 32 px, (\d+)-d": "runs/dc_fmnist",
}


def walked_text(root):
    """The walked docs under `root`, one text."""
    texts = []
    for doc in WALKED:
        with open(os.path.join(root, doc)) as f:
            texts.append(f.read())
    return "\n".join(texts)


def quoted_embedding_sizes(docs_text):
    """`{run folder: size}` of `QUOTED_SIZES` as the walked docs quote them (their prose joined,
    so a quote may wrap); each quote must be there exactly once."""
    prose = " ".join(docs_text.split())
    sizes = {}
    for pattern, folder in QUOTED_SIZES.items():
        found = re.findall(pattern, prose)
        assert len(found) == 1, f"the docs quote {pattern!r} {len(found)} times, not once"
        sizes[folder] = int(found[0])
    return sizes


def embedding_size(model_path, env, cwd):
    """The size of the embedding the `.keras` file at `model_path` returns (`None` when the
    file is not there: the step that writes it failed)."""
    if not os.path.isfile(model_path):
        return None
    code = (
        "import sys, numpy as np, keras_dml\n"
        "model = keras_dml.zoo.load(sys.argv[1])\n"
        "images = np.zeros((1, *model.backbone.input_shape[1:]), 'float32')\n"
        "print(int(model(images).shape[-1]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, model_path],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert result.returncode == 0, f"{model_path} does not embed: {result.stderr[-1500:]}"
    return int(result.stdout.strip().splitlines()[-1])


def size_mismatches(cwd, env):
    """One line per `QUOTED_SIZES` quote that differs from the size its run folder's model has."""
    mismatches = []
    for folder, size in quoted_embedding_sizes(walked_text(cwd)).items():
        produced = embedding_size(str(cwd / folder / "model.keras"), env, cwd)
        if produced != size:
            mismatches.append(f"the docs quote {size}-d for {folder}; its command made {produced}")
    return mismatches


@pytest.mark.slow
@pytest.mark.ci_every_run
def test_readme_runs_top_to_bottom_in_a_fresh_copy(tmp_path):
    copy = tmp_path / "keras-dml"
    copy.mkdir()
    fresh_copy(copy)
    env = {
        **os.environ,
        "PYTHONPATH": str(copy),
        "TF_CPP_MIN_LOG_LEVEL": "2",
        "KERAS_DML_CI_BUDGET": "1",
    }
    timings = []
    failures, skipped = walk(copy, env, timings)
    # The walk is the slow suite's longest test: its slowest steps show with `pytest -s`.
    print("\nslowest steps of the walk:")
    for seconds, step in sorted(timings, reverse=True)[:15]:
        print(f"{seconds:7.1f}s  {step}")
    for line in skipped:
        warnings.warn(f"not run: {line}", stacklevel=1)
    problems = [f"failed in a fresh copy: {failure}" for failure in failures]
    problems += [
        f"written outside .gitignore (write it under runs/ or ignore it): {line}"
        for line in left_behind(copy)
    ]
    problems += size_mismatches(copy, env)
    # The README's `keras-dml demo --output demo_output` (every method): its runs, table and
    # exports (tests/cli/test_demo.py checks the printed progress on a two-method demo).
    problems += [f"keras-dml demo: {p}" for p in demo_folder_problems("demo_output", cwd=copy)]
    assert not problems, "Following README.md and the site:\n" + "\n\n".join(problems)


def test_readme_installs_system_data_before_a_step_uses_it():
    """The `apt-get install` of a dataset's Debian package comes before the first README step
    that reads that dataset (the walk's check, without running anything)."""
    installed, early = set(), []
    for line, language, text in readme_steps(ROOT):
        argv = shlex.split(text) if language == "bash" else []
        if argv[:2] == ["apt-get", "install"]:
            installed.update(apt_packages(argv))
        elif system_packages_absent(text, ROOT, installed):
            early.append(f"{line} {text[:80]!r}: {system_packages_absent(text, ROOT, installed)}")
    assert not early, f"steps before the apt-get line of the data they read: {early}"


def test_readme_quotes_each_checked_embedding_size_once():
    sizes = quoted_embedding_sizes(walked_text(ROOT))
    assert set(sizes) == set(QUOTED_SIZES.values())


def test_left_behind_names_files_outside_gitignore_and_changed_tracked_files(tmp_path):
    for path, text in {
        ".gitignore": "/runs/\n",
        "a.txt": "a",
        "docs/images/projection.png": "p",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    identity = ["-c", "user.name=t", "-c", "user.email=t@localhost"]
    for command in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-q", "-m", "t"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True, capture_output=True)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "model.keras").write_text("ignored")
    (tmp_path / "docs/images/projection.png").write_text("regenerated")
    assert left_behind(tmp_path) == []
    (tmp_path / "baseline.onnx").write_text("left behind")
    (tmp_path / "a.txt").write_text("changed")
    assert left_behind(tmp_path) == [" M a.txt", "?? baseline.onnx"]
