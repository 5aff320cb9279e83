"""`keras-dml search` and the site's Search page (docs/search.md), run as written on a tiny
model."""

import os
import re
import shlex

import numpy as np
import pytest
from PIL import Image

from keras_dml.models import EmbeddingModel
from keras_dml.search import EmbeddingIndex
from keras_dml_cli import main
from tests.export.test_parity import tiny_backbone
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
COLOURS = {"cat": (220, 40, 40), "dog": (40, 40, 220), "owl": (40, 200, 40)}


def _readme_section():
    """docs/search.md up to its first subsection (the gallery, the command and the Python API)."""
    with open(os.path.join(ROOT, "docs", "search.md"), encoding="utf-8") as file:
        page = file.read()
    return page.split("# Search\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture()
def workspace(tmp_path, monkeypatch):
    """runs/baseline/model.keras (two learners) and photos/<class>/<i>.png, as the README uses."""
    monkeypatch.chdir(tmp_path)
    model = EmbeddingModel(tiny_backbone(), learner_dims=(8, 8))
    os.makedirs("runs/baseline")
    model.save("runs/baseline/model.keras")
    rng = np.random.default_rng(0)
    for name, colour in COLOURS.items():
        os.makedirs(f"photos/{name}")
        for i in range(4):
            pixels = np.clip(np.array(colour) + rng.normal(0, 20, (32, 32, 3)), 0, 255)
            Image.fromarray(pixels.astype(np.uint8)).save(f"photos/{name}/{i}.png")
    return tmp_path, model


@pytest.fixture()
def readme_workspace(tmp_path, monkeypatch):
    """runs/baseline/model.keras (two learners, untrained) and a gallery at the README's path
    (runs/photos/<digit>/<i>.png). The README writes that gallery from the test digits (run by
    tests/docs/test_commands.py); an untrained model cannot tell digits apart, so here each class
    is a colour, which it can (calibration then reaches the README's precision)."""
    monkeypatch.chdir(tmp_path)
    model = EmbeddingModel(tiny_backbone(), learner_dims=(8, 8))
    os.makedirs("runs/baseline")
    model.save("runs/baseline/model.keras")
    rng = np.random.default_rng(0)
    for name, colour in zip(("6", "7", "8"), COLOURS.values()):
        os.makedirs(f"runs/photos/{name}")
        for i in range(4):
            pixels = np.clip(np.array(colour) + rng.normal(0, 20, (32, 32, 3)), 0, 255)
            Image.fromarray(pixels.astype(np.uint8)).save(f"runs/photos/{name}/{i}.png")
    _, search_block = re.findall(r"```python\n(.*?)```", _readme_section(), re.S)
    return tmp_path, model, search_block


def gallery_size():
    return sum(len(files) for _, _, files in os.walk("runs/photos"))


def test_readme_search_command_runs(readme_workspace, capsys):
    tmp_path, model, _ = readme_workspace
    commands = re.findall(r"```bash\n(.*?)```", _readme_section(), re.S)
    assert len(commands) == 1
    argv = shlex.split(commands[0].strip())
    assert argv[:2] == ["keras-dml", "search"]
    query = argv[argv.index("--query") + 1]
    assert main(argv[1:]) == 0
    out = capsys.readouterr().out
    neighbours = [line.split("\t") for line in out.splitlines() if line.startswith("  ")]
    assert len(neighbours) == 3
    rank, score, label, path = neighbours[0]
    # The query is in the gallery: it is its own nearest neighbour, at similarity 2 (the sum of
    # the two learners' cosine similarities).
    assert (rank.strip(), label, path) == (
        "1",
        query.split("/")[-2],
        os.path.join(*query.split("/")),
    )
    assert float(score) == pytest.approx(2.0, abs=1e-4)
    # Scores are what the model gives: the inner product of its embeddings.
    images = np.stack([np.asarray(Image.open(p), "float32") for _, _, _, p in neighbours])
    query_image = np.asarray(Image.open(query), "float32")[None]
    expected = np.asarray(model(images)) @ np.asarray(model(query_image))[0]
    np.testing.assert_allclose([float(n[1]) for n in neighbours], expected, atol=1e-4)
    plot = tmp_path / argv[argv.index("--plot") + 1]
    assert plot.stat().st_size > 1000
    assert Image.open(plot).size[0] > Image.open(plot).size[1]
    saved_folder = argv[argv.index("--save-index") + 1]
    saved = EmbeddingIndex.load(tmp_path / saved_folder)
    assert len(saved) == gallery_size() and saved.class_names == ["6", "7", "8"]

    # The saved index answers the same query.
    again_argv = ["search", "runs/baseline/model.keras", "--load-index", saved_folder]
    assert main(again_argv + ["--query", query, "-k", "3"]) == 0
    again = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert again == [line for line in out.splitlines() if line.startswith("  ")]


def test_readme_search_python_block_runs(readme_workspace, capsys):
    _, _, search_block = readme_workspace
    namespace = {"__name__": "__readme__"}
    exec(compile(search_block, "README search", "exec"), namespace)
    index = namespace["index"]
    assert len(index) == gallery_size() and index.threshold is not None
    assert namespace["first_learner"].indices.shape == (1, 3)
    assert os.path.isfile("runs/photos_index/index.json")


def test_learner_flag_searches_that_learners_slice(workspace, capsys):
    _, model = workspace
    query = os.path.join("photos", "dog", "1.png")
    argv = ["search", "runs/baseline/model.keras", "--gallery", "photos"]
    argv += ["--query", query, "-k", "12", "--learner", "1"]
    assert main(argv) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    rows = [row for row in rows if row[0].startswith("  ")]
    paths = [os.path.join("photos", name, f"{i}.png") for name in COLOURS for i in range(4)]
    images = np.stack([np.asarray(Image.open(p), "float32") for p in paths])
    embeddings = np.asarray(model(images))
    query_row = embeddings[paths.index(query)]
    # Learner 1's scores: cosine similarities of the second 8-d slice only (at most 1, where the
    # whole embedding's reach 2); learner 0's differ, so the test tells the slices apart.
    by_learner = [embeddings[:, :8] @ query_row[:8], embeddings[:, 8:] @ query_row[8:]]
    assert np.abs(by_learner[0] - by_learner[1]).max() > 1e-3
    printed = {row[3]: float(row[1]) for row in rows}
    assert sorted(printed) == sorted(paths)
    np.testing.assert_allclose([printed[p] for p in paths], by_learner[1], atol=1e-4)
    scores = [float(row[1]) for row in rows]
    assert scores == sorted(scores, reverse=True)
    assert main([*argv[:-1], "2"]) == 1
    assert "`learner` must be in [0, 2)" in capsys.readouterr().err


def test_search_errors_are_one_line_messages(workspace, capsys):
    argv = ["search", "runs/baseline/model.keras", "--gallery", "photos"]
    assert main(argv + ["--query", "nope.png"]) == 1
    assert "Query image not found" in capsys.readouterr().err
    assert main(argv + ["--query", "photos/cat/0.png", "-k", "13"]) == 1
    err = capsys.readouterr().err
    assert "`k` must be an integer in [1, 12]" in err and "Traceback" not in err
    assert (
        main(
            [
                "search",
                "runs/baseline/model.keras",
                "--gallery",
                "nowhere",
                "--query",
                "photos/cat/0.png",
            ]
        )
        == 1
    )
    assert "gallery folder does not exist" in capsys.readouterr().err
    os.makedirs("empty")
    assert (
        main(
            [
                "search",
                "runs/baseline/model.keras",
                "--gallery",
                "empty",
                "--query",
                "photos/cat/0.png",
            ]
        )
        == 1
    )
    assert "No images" in capsys.readouterr().err


def test_help_lists_search():
    from keras_dml_cli import build_parser

    help_text = build_parser().format_help()
    assert "search" in help_text
    search_help = build_parser().parse_args(["search", "m", "--gallery", "g", "--query", "q"])
    assert (search_help.k, search_help.index) == (5, "exact")
