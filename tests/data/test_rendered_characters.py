"""Rendered-character machinery: faces of a font collection (`"file.ttc#N"`)."""

import numpy as np
import pytest

from keras_dml.data import load_dataset
from keras_dml.data.datasets import glyphs, hangul
from keras_dml.data.datasets import rendered_characters as rc


def make_collection(tmp_path):
    """`pair.ttc`: face 0 NanumGothic with 가 and 각, face 1 NanumMyeongjo with 가 only."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    found, _ = glyphs.find_font_files(["NanumGothic.ttf", "NanumMyeongjo.ttf"], "/usr/share/fonts")
    if len(found) < 2:
        pytest.skip(f"needs NanumGothic and NanumMyeongjo; install with: {hangul.INSTALL_COMMAND}")
    faces = []
    for source, text in zip(found, ("가각", "가")):
        single = str(tmp_path / f"face{len(faces)}.ttf")
        subset.main([source, f"--text={text}", f"--output-file={single}"])
        faces.append(single)
    collection = TTCollection()
    collection.fonts = [TTFont(face) for face in faces]
    collection.save(str(tmp_path / "pair.ttc"))
    return faces


def test_split_face_reads_only_a_numeric_suffix():
    assert glyphs.split_face("/f/NotoSansCJK-Regular.ttc#2") == ("/f/NotoSansCJK-Regular.ttc", 2)
    assert glyphs.split_face("NanumGothic.ttf") == ("NanumGothic.ttf", 0)
    assert glyphs.split_face("odd#name.ttf") == ("odd#name.ttf", 0)


def test_a_face_of_a_collection_is_found_mapped_and_drawn(tmp_path):
    faces = make_collection(tmp_path)
    found, missing = glyphs.find_font_files(["pair.ttc", "pair.ttc#1"], str(tmp_path))
    assert missing == [] and found == [str(tmp_path / "pair.ttc"), f"{tmp_path / 'pair.ttc'}#1"]
    codepoints = [ord("가"), ord("각")]
    assert glyphs.font_coverage(found[0], codepoints).tolist() == [True, True]
    assert glyphs.font_coverage(found[1], codepoints).tolist() == [True, False]
    options = dict(image_size=16, copies=1, max_rotation=0, scale_range=(1, 1), max_shift=0)
    second = glyphs.render_glyphs([found[1]], ["가"], **options)["images"]
    np.testing.assert_array_equal(
        second, glyphs.render_glyphs([faces[1]], ["가"], **options)["images"]
    )
    first = glyphs.render_glyphs([found[0]], ["가"], **options)["images"]
    assert not np.array_equal(first, second)


def test_a_face_beyond_the_collection_is_a_one_line_error(tmp_path):
    make_collection(tmp_path)
    with pytest.raises(ValueError, match=r"has 2 face\(s\); use `pair.ttc#0` to `pair.ttc#1`"):
        glyphs.find_font_files(["pair.ttc#2"], str(tmp_path))


def test_the_options_named_in_errors_include_the_split_and_render_options():
    assert {"val_fraction", "seed", "resize_size", "copies", "fonts", "render_seed"} <= set(
        rc.loader_options()
    )
    assert not {"render", "jitter", "cache_dir"} & set(rc.loader_options())


def test_a_misspelt_option_names_the_option_it_resembles():
    with pytest.raises(ValueError, match=r"\['val_fracton'\]\. Did you mean 'val_fraction'\?"):
        load_dataset("hangul", split="test", val_fracton=0.1)


def test_render_size_draws_small_and_the_pipelines_upscale_to_the_image_size(tmp_path):
    """The papers'-size rows: glyphs drawn at 32 px (the small cache) served at 64 px here."""
    if not glyphs.find_font_files(["NanumGothic.ttf"], "/usr/share/fonts")[0]:
        pytest.skip(f"needs NanumGothic; install with: {hangul.INSTALL_COMMAND}")
    options = dict(fonts=["NanumGothic.ttf"], num_train_classes=4, num_test_classes=2, copies=1)
    options.update(data_dir=str(tmp_path))
    small = load_dataset("hangul", split="test", image_size=32, **options)
    upscaled = load_dataset("hangul", split="test", image_size=64, render_size=32, **options)
    assert len(list(tmp_path.iterdir())) == 1  # one 32 px cache serves both
    np.testing.assert_array_equal(upscaled.images, small.images)
    assert upscaled.images.shape[1:3] == (32, 32) and upscaled.image_size == 64
    images, _ = next(iter(upscaled.as_tf_dataset(batch_size=4)))
    assert images.shape[1:] == (64, 64, 3)
    assert "render_size" in rc.loader_options()
