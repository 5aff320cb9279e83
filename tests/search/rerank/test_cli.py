"""`--rerank` and `--rerank-option` of `keras-dml search` and `keras-dml evaluate`."""

import json

import numpy as np
import pytest

from keras_dml.search import EmbeddingIndex
from keras_dml.search.rerank import parse_rerank_options
from keras_dml_cli import main
from tests.search.test_cli import workspace  # noqa: F401 (the fixture)


def printed(out):
    rows = [line.split("\t") for line in out.splitlines() if line.startswith("  ")]
    return [row[3] for row in rows], np.array([float(row[1]) for row in rows])


def test_search_cli_reranks_as_the_python_search(workspace, capsys):  # noqa: F811
    _, model = workspace
    index = EmbeddingIndex.from_model(model, gallery="photos")
    # An untrained model maps some colours to a zero vector (backend-dependent): query another.
    query = index.ids[int(np.argmax(np.linalg.norm(index.embeddings, axis=1)))]
    argv = ["search", "runs/baseline/model.keras", "--gallery", "photos", "--query", query]
    argv += ["-k", "6", "--rerank", "alpha_qe", "--rerank-option", "top_n=2"]
    assert main(argv) == 0
    paths, scores = printed(capsys.readouterr().out)
    want = index.search(query, k=6, rerank={"name": "alpha_qe", "top_n": 2})
    assert paths == list(want.ids[0])
    np.testing.assert_allclose(scores, want.scores[0], atol=1e-4)
    # Re-ranked: the expanded query is a unit vector, the plain query scores 2 against itself.
    assert np.abs(index.search(query, k=6).scores - want.scores).max() > 0.5


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--rerank", "k_reciprocl"], "Did you mean 'k_reciprocal'?"),
        (["--rerank", "aqe", "--rerank-option", "top_n"], "--rerank-option takes KEY=NUMBER"),
        (["--rerank-option", "k1=3"], "--rerank-option needs --rerank NAME"),
        (["--rerank", "aqe", "--rerank-option", "topn=3"], "Did you mean 'top_n'?"),
    ],
)
@pytest.mark.parametrize("command", ["search", "evaluate"])
def test_bad_rerank_arguments_fail_in_one_line_before_the_model_loads(
    command, extra, message, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    argv = [command, "missing.keras"]
    argv += ["--gallery", ".", "--query", "."] if command == "search" else ["--dataset", "digits"]
    assert main(argv + extra) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("keras-dml: error:") and message in err and "\n" not in err


def test_evaluate_cli_records_the_reranking(workspace, capsys):  # noqa: F811
    argv = ["evaluate", "runs/baseline/model.keras", "--dataset", "digits", "--json"]
    assert main(argv) == 0
    plain = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    argv += ["--rerank", "k_reciprocal", "--rerank-option", "k1=10", "--rerank-option", "k2=3"]
    assert main(argv) == 0
    reranked = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert reranked["rerank"] == "k_reciprocal(k1=10, k2=3, lambda=0.3, candidates=100)"
    assert "rerank" not in plain and reranked["nmi"] == plain["nmi"]
    assert reranked["map@r"] != plain["map@r"]


def test_rerank_options_parse_numbers():
    spec = parse_rerank_options("k_reciprocal", ["k1=10", "lambda=0.5", "candidates=2e2"])
    assert spec == {"name": "k_reciprocal", "k1": 10, "lambda": 0.5, "candidates": 200}
    assert isinstance(spec["k1"], int) and parse_rerank_options(None, []) is None
