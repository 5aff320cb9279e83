"""Rendered Hangul benchmark: glyph coverage, determinism, splits, cache, missing fonts."""

import os

import numpy as np
import pytest

from keras_dml.data import load_dataset
from keras_dml.data.datasets import glyphs, hangul

SPLITS = ("train", "val", "trainval", "test")


def installed_fonts(count):
    found, _ = glyphs.find_font_files(hangul.DEFAULT_FONTS, hangul.DEFAULT_FONT_DIR)
    if len(found) < count:
        pytest.skip(f"needs {count} Hangul fonts; install with: {hangul.INSTALL_COMMAND}")
    return found[:count]


def test_ks_x_1001_pool_and_seeded_disjoint_class_choice():
    pool = hangul.ks_x_1001_syllables()
    assert len(pool) == 2350 and len(set(pool)) == 2350
    assert all(0xAC00 <= ord(c) < 0xAC00 + 11172 for c in pool)
    chosen = hangul.hangul_classes(300, 1000, render_seed=0)
    assert len(set(chosen)) == 1300 and set(chosen) <= set(pool)
    assert chosen == hangul.hangul_classes(300, 1000, render_seed=0)
    assert chosen != hangul.hangul_classes(300, 1000, render_seed=1)
    with pytest.raises(ValueError, match="at most 2350 classes"):
        hangul.hangul_classes(2000, 351)


def test_fonts_lacking_a_glyph_are_skipped_never_drawn_as_tofu(tmp_path):
    """A font subset to one syllable, whose missing-glyph box has ink, draws only that syllable."""
    from fontTools import subset
    from fontTools.ttLib import TTFont
    from PIL import ImageFont

    full = installed_fonts(1)[0]
    partial = str(tmp_path / "partial.ttf")
    subset.main([full, "--text=가", f"--output-file={partial}", "--notdef-outline"])
    font = TTFont(partial)
    if "glyf" in font:  # Make the tofu visible whatever the source font's .notdef looks like.
        name = font.getBestCmap()[ord("가")]
        font["glyf"][".notdef"] = font["glyf"][name]
        font["hmtx"][".notdef"] = font["hmtx"][name]
        font.save(partial)
    assert glyphs.font_coverage(partial, [ord("가"), ord("각")]).tolist() == [True, False]
    tofu = glyphs.draw_glyph(ImageFont.truetype(partial, 32), "각", 64)
    assert tofu.getbbox() is not None  # Drawing it anyway would put ink on the image.

    out = glyphs.render_glyphs([partial, full], ["가", "각"], image_size=16, copies=3)
    pairs = sorted(set(zip(out["labels"].tolist(), out["font_ids"].tolist())))
    assert pairs == [(0, 0), (0, 1), (1, 1)]
    assert out["images"].shape == (9, 16, 16) and out["images"].dtype == np.uint8
    # Every image has a glyph with a black border around it (centred, not cut).
    assert (out["images"].max(axis=(1, 2)) > 200).all()
    assert out["images"][:, 0, :].max() < 64 and out["images"][:, :, 0].max() < 64


def test_render_is_deterministic_and_jittered():
    fonts = installed_fonts(2)
    first = glyphs.render_glyphs(fonts, ["가", "나"], image_size=24, copies=2, seed=3)
    again = glyphs.render_glyphs(fonts, ["가", "나"], image_size=24, copies=2, seed=3)
    other = glyphs.render_glyphs(fonts, ["가", "나"], image_size=24, copies=2, seed=4)
    np.testing.assert_array_equal(first["images"], again["images"])
    assert not np.array_equal(first["images"], other["images"])
    # The two poses of one (syllable, font) differ; without jitter they are identical.
    assert not np.array_equal(first["images"][0], first["images"][1])
    still = glyphs.render_glyphs(
        fonts[:1], ["가"], image_size=24, copies=2, max_rotation=0, scale_range=(1, 1), max_shift=0
    )
    np.testing.assert_array_equal(still["images"][0], still["images"][1])


def test_splits_are_disjoint_with_expected_counts(tmp_path):
    fonts = installed_fonts(3)
    options = dict(
        num_train_classes=6,
        num_test_classes=4,
        val_fraction=0.34,
        fonts=fonts,
        copies=2,
        image_size=20,
        data_dir=str(tmp_path),
    )
    splits = {s: load_dataset("hangul", split=s, **options) for s in SPLITS}
    names = {s: set(d.class_names) for s, d in splits.items()}
    assert {s: len(n) for s, n in names.items()} == {"train": 4, "val": 2, "trainval": 6, "test": 4}
    assert (
        names["train"].isdisjoint(names["val"])
        and names["train"] | names["val"] == names["trainval"]
    )
    assert names["trainval"].isdisjoint(names["test"])
    for data in splits.values():
        assert data.images.shape[1:] == (20, 20, 1) and data.images.dtype == np.uint8
        assert np.bincount(data.labels).tolist() == [len(fonts) * 2] * data.num_classes
    # Another validation seed moves classes between train and val, never into test.
    other = load_dataset("hangul", split="val", seed=5, **options)
    assert set(other.class_names) <= names["trainval"]


def test_pretrain_classes_are_the_rest_of_the_pool():
    pool = hangul.ks_x_1001_syllables()
    chosen = hangul.hangul_classes(300, 1000, render_seed=3)
    rest = hangul.hangul_pretrain_classes(300, 1000, render_seed=3)
    assert len(rest) == 1050 and set(rest).isdisjoint(chosen)
    assert set(rest) | set(chosen) == set(pool)
    with pytest.raises(ValueError, match="No Hangul syllable is left"):
        hangul.hangul_pretrain_classes(1350, 1000)


def test_pretrain_split_holds_only_classes_outside_the_benchmark(tmp_path):
    fonts = installed_fonts(2)
    options = dict(
        num_train_classes=1200,
        num_test_classes=1145,
        fonts=fonts,
        copies=1,
        image_size=16,
        data_dir=str(tmp_path),
    )
    pretrain = load_dataset("hangul", split="pretrain", **options)
    expected = hangul.hangul_pretrain_classes(1200, 1145)
    assert list(pretrain.class_names) == expected and pretrain.num_classes == 5
    assert np.bincount(pretrain.labels).tolist() == [len(fonts)] * 5
    for split in ("trainval", "test"):
        other = load_dataset("hangul", split=split, **options)
        assert set(other.class_names).isdisjoint(pretrain.class_names)
    with pytest.raises(ValueError, match="'pretrain'"):
        load_dataset("hangul", split="extra", **options)


def test_cache_is_reused_and_keyed_by_the_settings(tmp_path, monkeypatch):
    fonts = installed_fonts(2)
    first = hangul.render_hangul(3, 2, image_size=16, fonts=fonts, cache_dir=str(tmp_path))
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].endswith(".npz")

    def fail(*args, **kwargs):
        raise AssertionError("rendered again although the cache holds these settings")

    monkeypatch.setattr(hangul, "render_glyphs", fail)
    cached = hangul.render_hangul(3, 2, image_size=16, fonts=fonts, cache_dir=str(tmp_path))
    for key in ("images", "labels", "font_ids"):
        np.testing.assert_array_equal(first[key], cached[key])
    assert cached["characters"] == first["characters"]
    with pytest.raises(AssertionError, match="rendered again"):
        hangul.render_hangul(3, 2, image_size=16, fonts=fonts, cache_dir=str(tmp_path), copies=3)


def test_missing_fonts_name_the_apt_get_command(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install fonts-nanum fonts-unfonts-core"):
        load_dataset("hangul", split="test", font_dir=str(tmp_path), data_dir=str(tmp_path))
    message = ""
    try:
        hangul.resolve_fonts(None, str(tmp_path))
    except FileNotFoundError as error:
        message = str(error)
    assert "\n" not in message and "39 of 39" in message


@pytest.mark.slow
def test_full_default_benchmark(tmp_path):
    """The default benchmark: 300 + 1,000 classes, 39 typefaces x 2 poses (about 11 s of CPU)."""
    installed_fonts(len(hangul.DEFAULT_FONTS))
    splits = {s: load_dataset("hangul", split=s, data_dir=str(tmp_path)) for s in SPLITS}
    assert {s: d.num_classes for s, d in splits.items()} == {
        "train": 255,
        "val": 45,
        "trainval": 300,
        "test": 1000,
    }
    for data in (splits["trainval"], splits["test"]):
        counts = np.bincount(data.labels)
        assert counts.max() == 78
    # Baekmuk Dotum and Headline have an empty glyph for one test syllable: skipped, not drawn.
    assert sorted(np.bincount(splits["test"].labels))[:2] == [74, 78]
    assert len(splits["trainval"]) + len(splits["test"]) == 101_396
