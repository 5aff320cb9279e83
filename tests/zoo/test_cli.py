"""`keras-dml zoo list | info | download | publish` through add_zoo_parser and run_zoo."""

import argparse
import io
import json
from pathlib import Path

import keras
import pytest

from keras_dml import zoo
from keras_dml_cli import main
from keras_dml_cli.arguments.zoo import add_zoo_parser
from keras_dml_cli.run.zoo import run_zoo
from tests.zoo.test_httpserver import ZooServer, file_entry, isolate_zoo, make_card, write_card

DATA = b"0123456789" * 1000


@pytest.fixture
def cards(monkeypatch, tmp_path):
    directory, _ = isolate_zoo(monkeypatch, tmp_path)
    return directory


def _run(*argv):
    parser = argparse.ArgumentParser(prog="keras-dml")
    add_zoo_parser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    code = run_zoo(parser.parse_args(["zoo", *argv]), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _run_dir(tmp_path, metrics):
    run = tmp_path / "run"
    run.mkdir()
    model = keras.Sequential(
        [keras.Input((8, 8, 3)), keras.layers.Flatten(), keras.layers.Dense(2)]
    )
    model.save(run / "model.keras")
    (run / "metrics.json").write_text(json.dumps(metrics))
    config = {  # Shaped like recipes/configs/*.json.
        "description": "tiny test run",
        "method": "baseline",
        "dataset": "cub200",
        "backbone": {"name": "convnet", "freeze_batchnorm": False},
        "model": {"embedding_dim": 2},
        "seed": 3,
    }
    (run / "config.json").write_text(json.dumps(config))
    return run


def test_list_and_info(cards):
    write_card(cards, make_card("alpha", [file_entry("m.keras", DATA, url="https://e.org/m")]))
    code, out, _ = _run("list")
    assert code == 0
    assert out.splitlines()[0].split() == [
        "NAME",
        "STATUS",
        "METHOD",
        "BACKBONE",
        "DATASET",
        "METRICS",
    ]
    assert "alpha" in out and "recall@1=0.5" in out
    code, out, _ = _run("list", "--json")
    assert [m["name"] for m in json.loads(out)] == ["alpha"]
    code, out, _ = _run("list", "--status", "not-published")
    assert (code, out.strip()) == (
        0,
        "No model cards found (set KERAS_DML_MODELS_DIR to a folder of cards).",
    )
    code, out, _ = _run("info", "alpha")
    assert code == 0
    assert json.loads(out.split("\n# card:")[0])["name"] == "alpha"


def test_info_unknown_name_fails_with_suggestion(cards):
    write_card(cards, make_card("alpha", [file_entry("m.keras", DATA, url="https://e.org/m")]))
    code, out, err = _run("info", "alpah")
    assert code == 1 and out == ""
    assert "Did you mean: 'alpha'" in err


def test_download_prints_verified_path(cards):
    server = ZooServer({"/m.keras": DATA}).start()
    try:
        entry = file_entry("m.keras", DATA, url=server.url("/m.keras"))
        write_card(cards, make_card("alpha", [entry]))
        code, out, err = _run("download", "alpha", "--no-progress", "--all")
    finally:
        server.stop()
    assert code == 0, err
    filename, path = out.strip().split("\t")
    assert filename == "m.keras"
    assert Path(path).read_bytes() == DATA


def test_publish_run_dir_then_load_offline(cards, monkeypatch, tmp_path):
    run = _run_dir(tmp_path, {"recall@1": 0.61, "map@r": 0.2, "command": "keras-dml evaluate run"})
    output = tmp_path / "published"
    code, out, err = _run(
        "publish", str(run), "--output", str(output), "--name", "tiny-run",
        "--base-url", "https://example.org/zoo/", "--recipe", "recipes/configs/tiny.json",
    )  # fmt: skip
    assert code == 0, err
    assert "sha256=" in out and "https://example.org/zoo/tiny-run/model.keras" in out
    card = zoo.read_card(output / "tiny-run.json")
    entry = card.file_entry("model.keras")
    assert entry["path"] == "files/tiny-run/model.keras"
    assert entry["sha256"] == zoo.sha256_file(run / "model.keras")
    assert card.data["backbone"] == "convnet" and card.data["embedding_dim"] == 2
    assert card.data["training"]["protocol"].startswith("CUB-200-2011")
    assert card.data["training"]["seed"] == 3
    assert card.data["description"] == "tiny test run"
    assert card.data["metrics"]["values"] == {"recall@1": 0.61, "map@r": 0.2}
    assert card.data["preprocessing"]["input_size"] == [8, 8]
    monkeypatch.setenv("KERAS_DML_MODELS_DIR", str(output))
    assert zoo.load("tiny-run").output_shape == (None, 2)  # From files/, no network.
    code, _, err = _run("publish", str(run), "--output", str(output), "--name", "tiny-run")
    assert code == 1 and "exists" in err


def test_publish_without_metrics_command_fails(tmp_path):
    run = _run_dir(tmp_path, {"recall@1": 0.61})
    code, _, err = _run("publish", str(run), "--output", str(tmp_path / "out"))
    assert code == 1
    assert "'metrics.command' is missing" in err
    assert not (tmp_path / "out").exists()
    code, _, err = _run("publish", str(tmp_path / "nowhere"))
    assert code == 1 and "model.keras" in err
    (run / "model.keras").rename(run / "best.keras")
    code, _, err = _run(
        "publish", str(run), "--output", str(tmp_path / "out"), "--model-file", "best.keras",
        "--metrics-command", "keras-dml evaluate run",
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "out" / "files" / "run" / "model.keras").is_file()


def test_the_command_line_lists_the_zoo(cards, capsys):
    write_card(cards, make_card("alpha", [file_entry("m.keras", DATA, url="https://e.org/m")]))
    assert main(["zoo", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "alpha"
