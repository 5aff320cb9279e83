"""Rendered kanji benchmark: JIS X 0208 inventory, font coverage, splits, cache, missing fonts."""

import os
import textwrap

import numpy as np
import pytest

from keras_dml.data import load_dataset
from keras_dml.data.datasets import glyphs, kanji, rendered_characters
from tests.support.no_tensorflow import run_blocked


@pytest.fixture(scope="module")
def fonts():
    """Paths of the 32 default typefaces (the test is skipped, naming the apt line, without)."""
    found, missing = glyphs.find_font_files(
        kanji.DEFAULT_FONTS, rendered_characters.DEFAULT_FONT_DIR
    )
    if missing:
        pytest.skip(f"{len(missing)} kanji fonts missing; install: {kanji.INSTALL_COMMAND}")
    return found


def small(tmp_path, fonts, **options):
    """Options of a tiny kanji benchmark: 6 training (2 val) and 4 test kanji, 3 typefaces."""
    return dict(
        num_train_classes=6,
        num_test_classes=4,
        val_fraction=0.34,
        fonts=fonts[:3],
        image_size=20,
        data_dir=str(tmp_path),
        **options,
    )


def test_inventory_is_the_jis_x_0208_level_1_kanji_and_the_choice_is_seeded():
    pool = kanji.jis_x_0208_level1_kanji()
    assert len(pool) == len(set(pool)) == 2965
    assert (pool[0], pool[-1]) == ("亜", "腕")  # Row 16 cell 1, row 47 cell 51.
    assert "働" in pool and "弌" not in pool  # Level 1 (row 38) / level 2 (row 48, cell 1).
    assert {c.encode("euc_jp")[0] for c in pool} == set(range(0xB0, 0xD0))
    chosen = kanji.KANJI.classes(300, 1000, render_seed=0)
    assert len(set(chosen)) == 1300 and set(chosen) <= set(pool)
    assert chosen == kanji.KANJI.classes(300, 1000, render_seed=0)
    assert chosen != kanji.KANJI.classes(300, 1000, render_seed=1)
    with pytest.raises(ValueError, match="at most 2965 classes"):
        kanji.KANJI.classes(2000, 966)


def test_every_default_typeface_maps_every_kanji(fonts):
    """The inventory rule: no default typeface lacks a class, so no class is smaller."""
    assert len(set(kanji.DEFAULT_FONTS)) == 32
    codepoints = [ord(c) for c in kanji.jis_x_0208_level1_kanji()]
    lacking = {
        os.path.basename(path): int((~glyphs.font_coverage(path, codepoints)).sum())
        for path in fonts
    }
    assert {name: n for name, n in lacking.items() if n} == {}


def test_splits_follow_the_seeded_choice_and_every_image_has_ink(tmp_path, fonts):
    data = {
        s: load_dataset("kanji", split=s, **small(tmp_path, fonts))
        for s in rendered_characters.SPLITS
    }
    names = {s: set(d.class_names) for s, d in data.items()}
    chosen = kanji.KANJI.classes(6, 4)
    assert names["trainval"] == set(chosen[:6]) and names["test"] == set(chosen[6:])
    assert len(names["val"]) == 2 and names["train"] == names["trainval"] - names["val"]
    for split in data.values():
        assert split.images.shape[1:] == (20, 20, 1) and split.images.dtype == np.uint8
        assert set(np.bincount(split.labels).tolist()) == {3 * 2}  # 3 typefaces x 2 poses.
        # Every image shows a glyph (thin typefaces are grey at 20 px).
        assert split.images.max(axis=(1, 2, 3)).min() > 100
    resplit = load_dataset("kanji", split="val", **small(tmp_path, fonts, seed=5))
    assert set(resplit.class_names) <= names["trainval"]


def test_pretrain_split_is_the_rest_of_the_inventory(tmp_path, fonts):
    options = dict(num_train_classes=1500, num_test_classes=1460, copies=1, image_size=16)
    pretrain = load_dataset(
        "kanji", split="pretrain", fonts=fonts[:2], data_dir=str(tmp_path), **options
    )
    rest = kanji.KANJI.classes(1500, 1460, class_set="pretrain")
    assert list(pretrain.class_names) == rest and len(rest) == 5
    assert set(rest).isdisjoint(kanji.KANJI.classes(1500, 1460))
    assert set(np.bincount(pretrain.labels).tolist()) == {2}
    with pytest.raises(ValueError, match="No kanji is left"):
        kanji.KANJI.classes(1965, 1000, class_set="pretrain")


def test_render_is_deterministic_and_cached_by_its_settings(tmp_path, fonts, monkeypatch):
    def render(**options):
        return kanji.render_kanji(3, 2, image_size=16, fonts=fonts[:2], **options)

    stored = render(cache_dir=str(tmp_path))
    assert [f[:20] for f in os.listdir(tmp_path)] == ["kanji_16px_5classes_"]
    np.testing.assert_array_equal(stored["images"], render(cache_dir=False)["images"])
    assert render(cache_dir=False, render_seed=1)["characters"] != stored["characters"]

    def fail(*args, **kwargs):
        raise AssertionError("rendered again although the cache holds these settings")

    monkeypatch.setattr(kanji, "render_glyphs", fail)
    for key, value in render(cache_dir=str(tmp_path)).items():
        np.testing.assert_array_equal(value, stored[key])
    with pytest.raises(AssertionError, match="rendered again"):
        render(cache_dir=str(tmp_path), copies=3)


def test_missing_fonts_and_unknown_options_are_one_line_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as missing:
        load_dataset("kanji", split="test", font_dir=str(tmp_path), data_dir=str(tmp_path))
    message = str(missing.value)
    assert "\n" not in message and "32 of 32 kanji fonts" in message
    assert f"`{kanji.INSTALL_COMMAND}`" in message
    with pytest.raises(ValueError, match=r"no option\(s\) \['num_test_class'\]") as unknown:
        load_dataset("kanji", split="test", num_test_class=3, data_dir=str(tmp_path))
    assert "\n" not in str(unknown.value)


def test_kanji_loads_and_batches_with_tensorflow_blocked(tmp_path, fonts):
    code = textwrap.dedent(
        f"""
        import sys
        import keras_dml.data as data

        options = dict(num_train_classes=4, num_test_classes=2, fonts={fonts[:2]!r})
        train = data.load_dataset("kanji", split="trainval", data_dir={str(tmp_path)!r}, **options)
        images, labels = train.as_dataset(training=True, batch_size=4, num_parallel_calls=1)[0]
        assert images.shape == (4, 32, 32, 3) and train.num_classes == 4, images.shape
        assert "tensorflow" not in sys.modules, "tensorflow was imported"
        print("KANJI-WITHOUT-TENSORFLOW")
        """
    )
    result = run_blocked(tmp_path, "jax", code)
    assert "KANJI-WITHOUT-TENSORFLOW" in result.stdout, result.stderr[-3000:]


@pytest.mark.slow
def test_full_default_benchmark(tmp_path, fonts):
    """The default benchmark: 300 + 1,000 classes, 32 typefaces x 2 poses, 64 images a class."""
    trainval = load_dataset("kanji", split="trainval", data_dir=str(tmp_path))
    test = load_dataset("kanji", split="test", data_dir=str(tmp_path))
    val = load_dataset("kanji", split="val", data_dir=str(tmp_path))
    assert (trainval.num_classes, val.num_classes, test.num_classes) == (300, 45, 1000)
    for data in (trainval, test):
        assert set(np.bincount(data.labels).tolist()) == {64}
    assert len(trainval) + len(test) == 83_200
