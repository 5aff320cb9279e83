"""`keras-dml demo` refuses a folder holding files unless `--overwrite`.

It used to write into any existing folder: an earlier demo's runs were resumed instead of
retrained and files of the same name were replaced, without a word.
"""

import pytest

from keras_dml.demo.folder import DEMO_OUTPUTS, check_demo_folder, clear_demo_folder
from keras_dml_cli import main


@pytest.fixture
def earlier_demo(tmp_path):
    """A folder holding an earlier demo's run, results and export, and a file of the user's."""
    folder = tmp_path / "demo_output"
    (folder / "baseline").mkdir(parents=True)
    (folder / "baseline" / "model.keras").write_text("earlier")
    (folder / "results.json").write_text("{}")
    (folder / "best_saved_model").mkdir()
    (folder / "notes.txt").write_text("the user's")
    return folder


@pytest.fixture
def no_training(monkeypatch):
    """Makes a demo that starts training fail at once (the refusal must come first)."""
    from keras_dml.demo import run as demo

    def refuse(*args, **kwargs):
        raise AssertionError("the demo started on a folder holding files")

    monkeypatch.setattr(demo, "load_splits", refuse)


def one_error_line(capsys):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("keras-dml: error:"), err
    return err


def test_demo_refuses_a_folder_holding_files(earlier_demo, no_training, capsys):
    assert main(["demo", "--output", str(earlier_demo), "--epochs", "1"]) == 1
    err = one_error_line(capsys)
    assert "already holds files" in err and "--overwrite" in err and "_2" in err
    assert (earlier_demo / "baseline" / "model.keras").read_text() == "earlier"


def test_demo_refuses_a_file_as_its_folder(tmp_path, capsys):
    (tmp_path / "out").write_text("x")
    assert main(["demo", "--output", str(tmp_path / "out"), "--overwrite"]) == 1
    assert "is a file, not a folder" in one_error_line(capsys)


def test_run_demo_refuses_before_training(earlier_demo, no_training):
    from keras_dml.demo import run as demo

    with pytest.raises(FileExistsError, match="overwrite=True"):
        demo.run_demo(str(earlier_demo), methods=["baseline"], epochs=1, verbose=False)


def test_overwrite_reaches_the_demo(earlier_demo, monkeypatch):
    from keras_dml import demo

    calls = []
    monkeypatch.setattr(demo, "run_demo", lambda *args, **kwargs: calls.append(kwargs))
    assert main(["demo", "--output", str(earlier_demo), "--overwrite", "--epochs", "1"]) == 0
    assert calls == [{"methods": None, "epochs": 1, "overwrite": True}]


def test_overwrite_clears_the_earlier_demo_and_keeps_other_files(earlier_demo):
    check_demo_folder(str(earlier_demo), overwrite=True)
    clear_demo_folder(str(earlier_demo), ["baseline", "dc"])
    assert sorted(p.name for p in earlier_demo.iterdir()) == ["notes.txt"]
    assert set(DEMO_OUTPUTS) >= {"results.json", "best_saved_model"}


def test_a_new_or_empty_folder_is_accepted(tmp_path):
    check_demo_folder(str(tmp_path / "new"))
    (tmp_path / "empty").mkdir()
    check_demo_folder(str(tmp_path / "empty"))
