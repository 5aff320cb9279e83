"""Fallback fonts for figure text the default font cannot draw (e.g. Hangul class names)."""

import functools

from keras_dml.utils import optional_import

# Tried first, in this order, when installed: sans-serif faces covering many scripts.
PREFERRED_FALLBACKS = (
    "Noto Sans CJK KR",
    "Noto Sans CJK JP",
    "NanumGothic",
    "NanumBarunGothic",
    "UnDotum",
    "Baekmuk Gulim",
    "Baekmuk Dotum",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
)
# Fonts that draw every code point as the same box glyph: no better than a missing glyph.
PLACEHOLDER_FONTS = ("Last Resort",)


@functools.cache
def _codepoints(path):
    """The set of code points the font file at `path` maps (empty when it cannot be read)."""
    ft2font = optional_import("matplotlib.ft2font", feature="plotting")
    try:
        return frozenset(ft2font.FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):
        return frozenset()


@functools.cache
def _installed_fonts():
    """`(family name, file)` of the installed regular-weight fonts, preferred ones first."""
    font_manager = optional_import("matplotlib.font_manager", feature="plotting")
    regular = {}
    for entry in font_manager.fontManager.ttflist:
        if entry.name.startswith(PLACEHOLDER_FONTS):
            continue
        if entry.style == "normal" and entry.weight in (400, "normal", "regular", "book"):
            regular.setdefault(entry.name, entry.fname)
    rank = {name: i for i, name in enumerate(PREFERRED_FALLBACKS)}
    names = sorted(regular, key=lambda name: (rank.get(name, len(rank)), name))
    return tuple((name, regular[name]) for name in names)


def fallback_families(characters):
    """Installed font families that together cover `characters`, preferred ones first."""
    missing = {ord(c) for c in characters}
    families = []
    for name, path in _installed_fonts():
        if not missing:
            break
        covered = missing & _codepoints(path)
        if covered:
            families.append(name)
            missing -= covered
    return families


def use_fallback_fonts(figure):
    """Returns `figure`, its texts given a fallback font where their own lacks a character."""
    font_manager = optional_import("matplotlib.font_manager", feature="plotting")
    text_module = optional_import("matplotlib.text", feature="plotting")
    for text in figure.findobj(text_module.Text):
        content = text.get_text()
        if content.isascii():
            continue
        properties = text.get_fontproperties()
        primary = _codepoints(font_manager.findfont(properties))
        missing = {c for c in content if not c.isspace() and ord(c) not in primary}
        extra = [f for f in fallback_families(missing) if f not in properties.get_family()]
        if extra:
            text.set_fontfamily([*properties.get_family(), *extra])
    return figure
