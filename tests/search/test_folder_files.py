"""`keras-dml search --gallery FOLDER` and `EmbeddingIndex.add(folder)` skip, count and name
unreadable files (fatal with `--strict-files` / `strict_files=True`) and name ignored files."""

import os

import numpy as np
import pytest
from PIL import Image

from keras_dml.data.file_report import UnreadableFilesError
from keras_dml.search import EmbeddingIndex
from keras_dml_cli import main
from tests.search.test_cli import workspace  # noqa: F401 (the fixture)

MODEL = "runs/baseline/model.keras"


def add_bad_files():
    """A text file named .png, a NaN TIFF and a non-image file among 12 good images."""
    with open("photos/dog/broken.png", "wb") as file:
        file.write(b"not an image")
    Image.fromarray(np.full((32, 32), np.nan, np.float32)).save("photos/owl/nan.tif")
    with open("photos/cat/notes.txt", "w") as file:
        file.write("not an image")


def test_search_gallery_skips_counts_and_names_bad_files(workspace, capsys):  # noqa: F811
    add_bad_files()
    argv = ["search", MODEL, "--gallery", "photos", "--query", "photos/cat/0.png", "-k", "12"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "keras-dml: warning: folder 'photos': skipping 2 of 14 image files" in err
    assert "photos/dog/broken.png (UnidentifiedImageError" in err
    assert "photos/owl/nan.tif (InputContractError" in err
    assert "ignoring 1 files" in err and "photos/cat/notes.txt" in err
    assert "broken.png" not in out and "nan.tif" not in out and out.count("photos/") == 13
    assert main([*argv[:-2], "--strict-files"]) == 1
    err = capsys.readouterr().err
    assert "cannot be read: photos/dog/broken.png" in err and "Traceback" not in err


def test_index_add_keeps_labels_and_ids_of_the_readable_files(workspace):  # noqa: F811
    add_bad_files()
    index = EmbeddingIndex(model=MODEL)
    with pytest.warns(UserWarning, match="skipping 2 of 14"):
        index.add("photos")
    assert len(index) == 12 and not any("broken" in i or "nan" in i for i in index.ids)
    for label, path in zip(index.labels, index.ids):
        assert path.split(os.sep)[1] == index.class_names[label]
    with pytest.raises(UnreadableFilesError, match="broken.png"):
        EmbeddingIndex(model=MODEL).add("photos", strict_files=True)


def test_a_query_folder_follows_the_same_rule(workspace, capsys):  # noqa: F811
    os.makedirs("queries")
    Image.open("photos/cat/0.png").save("queries/cat.png")
    with open("queries/bad.png", "wb") as file:
        file.write(b"not an image")
    argv = ["search", MODEL, "--gallery", "photos", "--query", "queries", "-k", "1"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "query queries/cat.png" in out and "query queries/bad.png" not in out
    assert "folder 'queries': skipping 1 of 2 image files" in err and "queries/bad.png" in err
    assert main([*argv, "--strict-files"]) == 1
    assert "queries/bad.png" in capsys.readouterr().err
