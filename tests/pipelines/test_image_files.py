"""The image files of a pipeline: patterns, ids and labels, and the bad files it skips."""

import io
import os

import numpy as np
import pytest
from PIL import Image

from keras_dml.data.file_report import UnreadableFilesError
from keras_dml.pipelines.image_files import (
    BAD_FILE_ERRORS,
    decode_file,
    file_pattern,
    file_record,
    is_image,
    report_files,
)


def png(pixels):
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def tiff(pixels):
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="TIFF")
    return buffer.getvalue()


def test_a_folder_labels_by_class_folder_and_a_glob_by_parent_folder():
    assert file_pattern("photos") == ("photos/**", "photos")
    assert file_pattern("gs://bucket/photos/*/*.jpg") == ("gs://bucket/photos/*/*.jpg", None)
    assert file_record("photos/cat/a/1.png", "photos")[2] == "cat"
    assert file_record("photos/1.png", "photos") == ("photos/1.png", "photos/1.png", "")
    assert file_record("gs://b/photos/cat/a/1.png", None)[2] == "a"
    assert is_image("x/1.JPG") and is_image("x/1.tiff") and not is_image("x/notes.txt")


def test_an_image_is_decoded_at_the_model_size():
    pixels = np.random.default_rng(0).integers(0, 256, (40, 48, 3), dtype=np.uint8)
    decoded = decode_file(png(pixels), (32, 32, 3))
    assert decoded.shape == (32, 32, 3) and decoded.dtype == np.uint8


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"not an image", "not an image file"),
        (png(np.random.default_rng(0).integers(0, 256, (32, 32, 3), np.uint8))[:1000], "truncated"),
        (tiff(np.full((8, 8), np.nan, np.float32)), "NaN or infinite pixels"),
        (tiff(np.full((8, 8), 300.0, np.float32)), "raw pixels in \\[0, 255\\]"),
    ],
    ids=["text", "truncated", "nan", "range"],
)
def test_a_bad_file_raises_an_error_the_pipeline_skips(data, reason):
    with pytest.raises(BAD_FILE_ERRORS, match=reason):
        decode_file(data, (8, 8, 3))


COUNTS = {
    "files": 3,
    "bad_file_names": ["photos/dog/broken.png (OSError: not an image file PIL can read)"],
    "non_image_file_names": ["photos/cat/notes.txt"],
}


def test_a_run_names_its_bad_and_non_image_files_and_strict_files_makes_bad_ones_fatal():
    with pytest.warns(UserWarning) as record:
        report_files(COUNTS, "embed 'photos'")
    first, second = (str(w.message) for w in record)
    assert first == (
        "embed 'photos': ignoring 1 files (not .jpg .jpeg .png .bmp .gif .webp .tif .tiff): "
        "photos/cat/notes.txt."
    )
    assert second.startswith(
        "embed 'photos': skipping 1 of 3 image files that are missing or cannot be decoded: "
        "photos/dog/broken.png (OSError: not an image file PIL can read)."
    )
    strict = pytest.raises(UnreadableFilesError, match="1 of 3 image files cannot be read")
    with pytest.warns(UserWarning, match="ignoring 1 files"), strict:
        report_files(COUNTS, "embed 'photos'", strict_files=True)


def test_embed_counts_and_names_non_image_files_and_strict_files_fails(tmp_path_factory):
    pytest.importorskip("apache_beam")
    pytest.importorskip("pyarrow")
    from keras_dml.pipelines.embed import embed_images
    from tests.stores.gallery import gallery_folder

    root, model, folder = gallery_folder(tmp_path_factory, "files")
    with open(os.path.join(folder, "cat", "notes.txt"), "w") as file:
        file.write("not an image")
    with open(os.path.join(folder, "dog", "broken.png"), "wb") as file:
        file.write(b"not an image")
    with pytest.warns(UserWarning, match="ignoring 1 files .*notes.txt"):
        counts = embed_images(model, folder, output=str(root / "out"), batch_size=8)
    assert (counts["non_image_files"], counts["bad_files"], counts["embedded"]) == (1, 1, 15)
    assert counts["non_image_file_names"] == [os.path.join(folder, "cat", "notes.txt")]
    with pytest.raises(UnreadableFilesError, match="broken.png"):
        embed_images(model, folder, output=str(root / "again"), strict_files=True)
