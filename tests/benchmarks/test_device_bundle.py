"""`benchmarks/speed/device_bundle.py`: a rendered dataset travels as its cache to a machine without
its typefaces, and loads there to the same arrays without opening a font."""

import json
import os

import numpy as np
import pytest
from fontTools.ttLib import TTLibError

from keras_dml.data import load_dataset
from keras_dml.data.datasets import hangul
from tests.support.helpers import benchmark_script

FONT = "NanumGothic.ttf"
OPTIONS = {"fonts": [FONT], "num_train_classes": 4, "num_test_classes": 2, "copies": 1}


@pytest.mark.skipif(
    not os.path.exists(os.path.join(hangul.DEFAULT_FONT_DIR, "truetype", "nanum", FONT)),
    reason="the Hangul fonts are not installed: apt-get install fonts-nanum",
)
def test_packed_cache_loads_the_same_arrays_where_the_fonts_are_missing(tmp_path):
    bundle_script = benchmark_script("speed.device_bundle")
    bundle = tmp_path / "bundle"
    options = [f"--dataset-option={k}={json.dumps(v)}" for k, v in OPTIONS.items()]
    bundle_script.main(["pack", "--dataset", "hangul", "--output", str(bundle), *options])
    manifest = json.loads((bundle / "fonts.json").read_text())
    assert [os.path.basename(f["path"]) for f in manifest["fonts"]] == [FONT]

    # The GPU machine: no fonts under its root, the cache restored into an empty data folder.
    root, data = tmp_path / "machine", tmp_path / "data"
    bundle_script.main(
        ["unpack", "--bundle", str(bundle), "--data-dir", str(data)] + ["--root", str(root)]
    )
    placeholder = root / manifest["fonts"][0]["path"].lstrip("/")
    assert placeholder.stat().st_size == manifest["fonts"][0]["size"]
    assert placeholder.read_bytes().strip(b"\0") == b""  # no font data travelled

    # The loader finds the restored cache (a render would fail on the empty placeholder).
    font_dir = str(root / hangul.DEFAULT_FONT_DIR.lstrip("/"))
    there = load_dataset(
        "hangul", split="test", data_dir=str(data / "hangul"), font_dir=font_dir, **OPTIONS
    )
    here = load_dataset("hangul", split="test", data_dir=str(tmp_path / "here"), **OPTIONS)
    np.testing.assert_array_equal(there.images, here.images)
    np.testing.assert_array_equal(there.labels, here.labels)

    # A load the cache does not cover draws with the placeholder, and fails.
    with pytest.raises(TTLibError, match="Not a TrueType or OpenType font"):
        load_dataset(
            "hangul",
            split="test",
            data_dir=str(data / "hangul"),
            font_dir=font_dir,
            **{**OPTIONS, "copies": 2},
        )
