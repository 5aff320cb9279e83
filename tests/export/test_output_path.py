"""An export to a path it cannot write fails at once, in one line.

A path under a regular file, or in a read-only folder, used to fail only after the model was
loaded, traced and converted, with the operating system's message. The machine running the
tests is root (every folder is writable), so "read-only" is `os.access` answering no.
"""

import os

import pytest

from keras_dml.export import output_path
from keras_dml.export.output_path import check_output_path
from keras_dml_cli import main

NOT_A_MODEL = object()  # an export that started working on it would fail differently


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("a regular file")
    return path


@pytest.fixture
def read_only(monkeypatch, tmp_path):
    """`tmp_path/locked` answers "not writable" to `os.access`."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(
        output_path.os,
        "access",
        lambda path, mode: False if os.fspath(path) == str(locked) else real_access(path, mode),
    )
    return locked


def one_line(error):
    message = str(error.value)
    assert "\n" not in message and "--output" in message, message
    return message


def test_onnx_under_a_regular_file_fails_before_any_work(a_file):
    from keras_dml.export import export_onnx

    with pytest.raises(NotADirectoryError) as error:
        export_onnx(NOT_A_MODEL, a_file / "sub" / "model.onnx")
    assert "notes.txt" in one_line(error) and "is a file, not a folder" in str(error.value)


def test_saved_model_under_a_regular_file_fails_before_any_work(a_file):
    from keras_dml.export import export_saved_model

    with pytest.raises(NotADirectoryError) as error:
        export_saved_model(NOT_A_MODEL, a_file / "saved_model")
    assert "notes.txt" in one_line(error)


def test_saved_model_onto_a_file_and_onnx_onto_a_folder(a_file, tmp_path):
    with pytest.raises(NotADirectoryError, match="a file of that name exists") as error:
        check_output_path(a_file, "directory")
    one_line(error)
    with pytest.raises(IsADirectoryError, match="it is a folder") as error:
        check_output_path(tmp_path, "file")
    assert "model.onnx" in one_line(error)


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_read_only_folder_fails_before_any_work(read_only, kind):
    from keras_dml.export import export_onnx, export_saved_model

    export = export_onnx if kind == "file" else export_saved_model
    with pytest.raises(PermissionError, match="is not writable") as error:
        export(NOT_A_MODEL, read_only / "new" / "model")
    assert str(read_only) in one_line(error)


def test_missing_parents_that_can_be_created_are_fine(tmp_path):
    check_output_path(tmp_path / "a" / "b" / "model.onnx", "file")
    check_output_path(tmp_path / "a" / "b" / "saved_model", "directory")
    (tmp_path / "old.onnx").write_text("an earlier export, replaced")
    check_output_path(tmp_path / "old.onnx", "file")


@pytest.mark.parametrize("export_format", ["onnx", "saved_model"])
def test_cli_export_checks_the_output_before_loading_the_model(a_file, export_format, capsys):
    # The model does not exist: the output is checked first, so the error is about the output.
    argv = ["export", "no_such_model.keras", "--format", export_format]
    assert main([*argv, "--output", str(a_file / "out")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("keras-dml: error: Cannot write"), err
    assert "notes.txt" in err and "no_such_model" not in err


def test_cli_onnx_with_both_dtypes_fails_before_loading_the_model(tmp_path, capsys):
    argv = ["export", "no_such_model.keras", "--format", "onnx", "--input-dtype", "both"]
    assert main([*argv, "--output", str(tmp_path / "m.onnx")]) == 1
    assert "--input-dtype both is for SavedModel only" in capsys.readouterr().err
