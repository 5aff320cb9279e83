"""Which files a gallery folder holds: every image format the ONNX client reads, TIFF included."""

import ast
import os

import numpy as np
from PIL import Image

from keras_dml.search.gallery import IMAGE_SUFFIXES, list_image_folder
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT


def test_tiff_files_are_gallery_images(tmp_path):
    pixels = np.full((8, 8, 3), 120, np.uint8)
    for name, suffix in (("a", ".png"), ("b", ".tif"), ("b", ".TIFF")):
        (tmp_path / name).mkdir(exist_ok=True)
        Image.fromarray(pixels).save(tmp_path / name / f"0{suffix}")
    (tmp_path / "a" / "notes.txt").write_text("not an image")
    paths, labels, classes = list_image_folder(tmp_path)
    assert sorted(os.path.basename(p) for p in paths) == ["0.TIFF", "0.png", "0.tif"]
    assert classes == ["a", "b"] and sorted(labels.tolist()) == [0, 1, 1]


def test_gallery_and_onnx_client_read_the_same_formats():
    # deployment/onnx_client.py runs without keras_dml: its list is read from its source.
    with open(os.path.join(ROOT, "deployment", "onnx_client.py")) as file:
        tree = ast.parse(file.read())
    client = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "IMAGE_SUFFIXES"
    )
    assert set(IMAGE_SUFFIXES) == set(client)
