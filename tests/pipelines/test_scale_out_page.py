"""docs/scale_out.md as written: its commands and Python run in order (real Beam and Milvus
Lite), the store's search prints what the folder's exact search prints, a rerun adds no rows, and
the Dataflow, Flink and Spark commands parse with existing Beam options (they cannot run here)."""

import os
import shlex
import subprocess
import sys

import pytest

from keras_dml_cli.parser import build_parser
from tests.docs.test_commands import bash_commands, check_pip_install, fenced_blocks
from tests.stores.gallery import make_gallery
from tests.support.paths import REPO_ROOT

PAGE = "docs/scale_out.md"
RUNNERS = ("DataflowRunner", "FlinkRunner", "SparkRunner")


def remote_commands():
    return [
        " ".join(line.split())
        for language, _, text in fenced_blocks(PAGE)
        if language == "text"
        for line in text.splitlines()
        if line.startswith("keras-dml embed ")
    ]


def test_the_cluster_commands_parse_for_each_runner():
    commands = remote_commands()
    runners = []
    for command in commands:
        argv = shlex.split(command)[1:]
        args = build_parser(argv).parse_args(argv)
        assert args.store.startswith("http://") and args.model.startswith("gs://")
        runners.append(args.runner)
    assert runners == list(RUNNERS)


def test_every_beam_option_of_the_cluster_commands_exists():
    pytest.importorskip("apache_beam")
    from apache_beam.options.pipeline_options import PipelineOptions

    known = set(PipelineOptions([]).get_all_options())
    for command in remote_commands():
        argv = shlex.split(command)[1:]
        options = build_parser(argv).parse_args(argv).beam_options
        names = [option.split("=")[0].removeprefix("--") for option in options]
        assert names and set(names) <= known, sorted(set(names) - known)
        PipelineOptions(options)  # each value parses


def page_steps():
    """`(language, text)` of the page's blocks in order: bash split into commands."""
    steps = []
    for language, _, text in fenced_blocks(PAGE):
        if language == "python":
            steps.append(("python", text))
        elif language == "bash":
            steps += [("bash", command) for command in bash_commands(text)]
    return steps


def run(language, text, cwd):
    if language == "python":
        argv = [sys.executable, "-c", text]
    else:
        argv = shlex.split(text)
        argv = [sys.executable, "-m", "keras_dml_cli", *argv[1:]]
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"{text}\n{result.stdout[-2000:]}{result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.slow
def test_the_page_runs_and_the_store_search_prints_the_exact_search(tmp_path):
    pytest.importorskip("apache_beam")
    pytest.importorskip("pymilvus")
    pytest.importorskip("onnxruntime")
    from keras_dml.export import export_onnx
    from keras_dml.stores import MilvusStore
    from keras_dml.zoo.loading import load

    # What the earlier pages make: runs/baseline/model.keras, its ONNX file and runs/photos.
    model, folder = make_gallery(str(tmp_path / "made"))
    os.makedirs(tmp_path / "runs" / "baseline")
    os.replace(model, tmp_path / "runs" / "baseline" / "model.keras")
    export_onnx(
        load(str(tmp_path / "runs" / "baseline" / "model.keras")),
        str(tmp_path / "runs" / "baseline.onnx"),
    )
    os.makedirs(tmp_path / "runs" / "photos")
    for old, new in zip(("cat", "dog", "owl"), ("6", "7", "8")):
        os.replace(os.path.join(folder, old), tmp_path / "runs" / "photos" / new)
    printed = {}
    for language, text in page_steps():
        if text.startswith("pip install"):
            check_pip_install(shlex.split(text))
            continue
        printed[text] = run(language, text, tmp_path)
    searches = [printed[text] for text in printed if text.startswith("keras-dml search")]
    assert (
        len(searches) == 2 and searches[0] == searches[1] and "runs/photos/6/0.png" in searches[0]
    )
    embed = next(text for text in printed if "--store runs/photos.db" in text and "embed" in text)
    run("bash", embed, tmp_path)  # again: the rows are replaced, none added
    assert MilvusStore(str(tmp_path / "runs" / "photos.db")).count() == 15
