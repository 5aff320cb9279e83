"""Class names the default font cannot draw (Hangul) are drawn with an installed fallback font."""

import warnings

import numpy as np
import pytest

from keras_dml.visualization import plot_projection, plot_retrieval_grid
from keras_dml.visualization._common import figure_png, new_figure
from keras_dml.visualization.fonts import fallback_families, use_fallback_fonts

pytest.importorskip("matplotlib")
HANGUL = ["가", "나", "다"]


def hangul_font_installed():
    return bool(fallback_families("가"))


needs_hangul_font = pytest.mark.skipif(
    not hangul_font_installed(), reason="no Hangul font (.ci/run installs fonts-nanum)"
)


def missing_glyph_warnings(figure):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure_png(figure)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def hangul_embeddings():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 4)
    embeddings = rng.normal(size=(12, 4)) + 3 * np.eye(4)[labels]
    images = rng.integers(0, 255, size=(12, 8, 8, 1)).astype("float32")
    return embeddings, images, labels


@needs_hangul_font
def test_a_hangul_title_is_drawn_without_missing_glyphs():
    figure, (axis,) = new_figure(1)
    axis.set_title("class 가나")
    # The check itself: DejaVu Sans lacks Hangul, so without the fallback the glyphs are missing.
    assert missing_glyph_warnings(figure)
    use_fallback_fonts(figure)
    assert missing_glyph_warnings(figure) == []
    family = axis.title.get_fontfamily()
    assert len(family) >= 2 and family[-1] in fallback_families("가나")


@needs_hangul_font
def test_pictures_with_hangul_class_names_have_no_missing_glyphs():
    embeddings, images, labels = hangul_embeddings()
    projection = plot_projection(embeddings, None, labels, class_names=HANGUL)
    assert missing_glyph_warnings(projection) == []
    grid = plot_retrieval_grid(embeddings, images, labels, queries=[0, 4], k=2, class_names=HANGUL)
    assert missing_glyph_warnings(grid) == []


def test_ascii_text_keeps_its_font_and_unknown_characters_get_no_fallback():
    figure, (axis,) = new_figure(1)
    axis.set_title("plain title")
    before = axis.title.get_fontfamily()
    use_fallback_fonts(figure)
    assert axis.title.get_fontfamily() == before
    # An unassigned code point no font maps: no family is added, nothing fails.
    assert fallback_families("\u0378") == []
