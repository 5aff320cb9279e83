"""The image files of a pipeline: patterns, ids and labels, and the bad files it skips."""

import io

import numpy as np
import pytest
from PIL import Image

from keras_dml.pipelines.image_files import (
    BAD_FILE_ERRORS,
    decode_file,
    file_pattern,
    file_record,
    is_image,
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
