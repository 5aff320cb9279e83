"""Rendered kanji benchmark: JIS X 0208 inventory, font coverage, splits, cache, missing fonts."""

import os

import numpy as np
import pytest

from keras_dml.data import load_dataset
from keras_dml.data.datasets import glyphs, kanji, rendered_characters

SPLITS = ("train", "val", "trainval", "test")


def installed_fonts(count):
    found, _ = glyphs.find_font_files(kanji.DEFAULT_FONTS, rendered_characters.DEFAULT_FONT_DIR)
    if len(found) < count:
        pytest.skip(f"needs {count} kanji fonts; install with: {kanji.INSTALL_COMMAND}")
    return found[:count]


def test_jis_x_0208_level1_pool_and_seeded_disjoint_class_choice():
    pool = kanji.jis_x_0208_level1_kanji()
    assert len(pool) == 2965 and len(set(pool)) == 2965
    assert (pool[0], pool[-1]) == ("亜", "腕")  # Row 16 cell 1, row 47 cell 51.
    assert "働" in pool and "弌" not in pool  # Level 1 (row 38) / level 2 (row 48, cell 1).
    assert all(0xB0 <= c.encode("euc_jp")[0] <= 0xCF for c in pool)
    assert all(0x4E00 <= ord(c) <= 0x9FFF for c in pool)
    chosen = kanji.kanji_classes(300, 1000, render_seed=0)
    assert len(set(chosen)) == 1300 and set(chosen) <= set(pool)
    assert chosen == kanji.kanji_classes(300, 1000, render_seed=0)
    assert chosen != kanji.kanji_classes(300, 1000, render_seed=1)
    with pytest.raises(ValueError, match="at most 2965 classes"):
        kanji.kanji_classes(2000, 966)


def test_default_fonts_are_distinct_and_each_maps_every_kanji():
    """The inventory rule: every default typeface covers all 2,965 classes (none shrinks)."""
    fonts = installed_fonts(len(kanji.DEFAULT_FONTS))
    assert len(kanji.DEFAULT_FONTS) == len(set(kanji.DEFAULT_FONTS)) == 32
    codepoints = [ord(c) for c in kanji.jis_x_0208_level1_kanji()]
    lacking = {
        os.path.basename(path): int((~glyphs.font_coverage(path, codepoints)).sum())
        for path in fonts
    }
    assert {name: n for name, n in lacking.items() if n} == {}


def test_splits_are_disjoint_follow_the_class_choice_and_have_ink(tmp_path):
    fonts = installed_fonts(3)
    options = dict(
        num_train_classes=6,
        num_test_classes=4,
        val_fraction=0.34,
        fonts=fonts,
        image_size=20,
        data_dir=str(tmp_path),
    )
    splits = {s: load_dataset("kanji", split=s, **options) for s in SPLITS}
    names = {s: set(d.class_names) for s, d in splits.items()}
    assert {s: len(n) for s, n in names.items()} == {"train": 4, "val": 2, "trainval": 6, "test": 4}
    assert names["train"].isdisjoint(names["val"])
    assert names["train"] | names["val"] == names["trainval"]
    chosen = kanji.kanji_classes(6, 4)
    assert names["trainval"] == set(chosen[:6]) and names["test"] == set(chosen[6:])
    for data in splits.values():
        assert data.images.shape[1:] == (20, 20, 1) and data.images.dtype == np.uint8
        assert np.bincount(data.labels).tolist() == [len(fonts) * 2] * data.num_classes
        # Every image shows a glyph (thin typefaces are grey at 20 px).
        assert (data.images.max(axis=(1, 2, 3)) > 100).all()
    other = load_dataset("kanji", split="val", seed=5, **options)
    assert set(other.class_names) <= names["trainval"]


def test_pretrain_split_holds_the_rest_of_the_pool(tmp_path):
    fonts = installed_fonts(2)
    options = dict(
        num_train_classes=1500,
        num_test_classes=1460,
        fonts=fonts,
        copies=1,
        image_size=16,
        data_dir=str(tmp_path),
    )
    pretrain = load_dataset("kanji", split="pretrain", **options)
    expected = kanji.kanji_pretrain_classes(1500, 1460)
    assert list(pretrain.class_names) == expected and pretrain.num_classes == 5
    assert set(expected).isdisjoint(kanji.kanji_classes(1500, 1460))
    assert np.bincount(pretrain.labels).tolist() == [len(fonts)] * 5
    with pytest.raises(ValueError, match="No kanji is left"):
        kanji.kanji_pretrain_classes(1965, 1000)


def test_render_is_deterministic_and_cached_by_its_settings(tmp_path, monkeypatch):
    fonts = installed_fonts(2)
    first = kanji.render_kanji(3, 2, image_size=16, fonts=fonts, cache_dir=str(tmp_path))
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("kanji_16px_5classes_")
    fresh = kanji.render_kanji(3, 2, image_size=16, fonts=fonts, cache_dir=False)
    other = kanji.render_kanji(3, 2, image_size=16, fonts=fonts, cache_dir=False, render_seed=1)
    np.testing.assert_array_equal(first["images"], fresh["images"])
    assert other["characters"] != first["characters"]

    def fail(*args, **kwargs):
        raise AssertionError("rendered again although the cache holds these settings")

    monkeypatch.setattr(kanji, "render_glyphs", fail)
    cached = kanji.render_kanji(3, 2, image_size=16, fonts=fonts, cache_dir=str(tmp_path))
    for key in ("images", "labels", "font_ids"):
        np.testing.assert_array_equal(first[key], cached[key])
    with pytest.raises(AssertionError, match="rendered again"):
        kanji.render_kanji(3, 2, image_size=16, fonts=fonts, cache_dir=str(tmp_path), copies=3)


def test_missing_fonts_and_unknown_options_are_one_line_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as missing:
        load_dataset("kanji", split="test", font_dir=str(tmp_path), data_dir=str(tmp_path))
    message = str(missing.value)
    assert "\n" not in message and "32 of 32 kanji fonts" in message
    assert f"`{kanji.INSTALL_COMMAND}`" in message
    with pytest.raises(ValueError, match=r"no option\(s\) \['num_test_class'\]") as unknown:
        load_dataset("kanji", split="test", num_test_class=3, data_dir=str(tmp_path))
    assert "\n" not in str(unknown.value)


@pytest.mark.slow
def test_full_default_benchmark(tmp_path):
    """The default benchmark: 300 + 1,000 classes, 32 typefaces x 2 poses, 64 images a class."""
    installed_fonts(len(kanji.DEFAULT_FONTS))
    splits = {s: load_dataset("kanji", split=s, data_dir=str(tmp_path)) for s in SPLITS}
    assert {s: d.num_classes for s, d in splits.items()} == {
        "train": 255,
        "val": 45,
        "trainval": 300,
        "test": 1000,
    }
    for data in (splits["trainval"], splits["test"]):
        assert set(np.bincount(data.labels).tolist()) == {64}
    assert len(splits["trainval"]) + len(splits["test"]) == 83_200
