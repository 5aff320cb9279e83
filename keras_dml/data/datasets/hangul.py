"""Hangul syllables rendered from Debian's Korean typefaces: a many-class offline benchmark."""

from keras_dml.data.datasets.glyphs import render_glyphs
from keras_dml.data.datasets.hangul_classes import (  # noqa: F401 (re-exported)
    hangul_classes,
    hangul_pretrain_classes,
    ks_x_1001_syllables,
)
from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.rendered_characters import (  # noqa: F401 (re-exported)
    CLASS_SETS,
    DEFAULT_FONT_DIR,
    CharacterSet,
    load_character_split,
    render_character_set,
)
from keras_dml.data.datasets.rendered_characters import resolve_fonts as resolve_set_fonts

# Debian packages holding DEFAULT_FONTS; the error for missing fonts names this command.
APT_PACKAGES = ("fonts-nanum", "fonts-unfonts-core", "fonts-unfonts-extra", "fonts-baekmuk")
DEFAULT_FONTS = (
    # fonts-nanum
    "NanumBarunGothic.ttf",
    "NanumBarunGothicBold.ttf",
    "NanumGothic.ttf",
    "NanumGothicBold.ttf",
    "NanumGothicCoding.ttf",
    "NanumGothicCodingBold.ttf",
    "NanumMyeongjo.ttf",
    "NanumMyeongjoBold.ttf",
    "NanumSquareB.ttf",
    "NanumSquareR.ttf",
    "NanumSquareRoundB.ttf",
    "NanumSquareRoundR.ttf",
    # fonts-unfonts-core
    "UnBatang.ttf",
    "UnBatangBold.ttf",
    "UnDinaru.ttf",
    "UnDinaruBold.ttf",
    "UnDinaruLight.ttf",
    "UnDotum.ttf",
    "UnDotumBold.ttf",
    "UnGraphic.ttf",
    "UnGraphicBold.ttf",
    "UnGungseo.ttf",
    "UnPilgi.ttf",
    "UnPilgiBold.ttf",
    # fonts-unfonts-extra
    "UnJamoBatang.ttf",
    "UnJamoDotum.ttf",
    "UnJamoNovel.ttf",
    "UnJamoSora.ttf",
    "UnPen.ttf",
    "UnPenheulim.ttf",
    "UnPilgia.ttf",
    "UnShinmun.ttf",
    "UnTaza.ttf",
    "UnVada.ttf",
    "UnYetgul.ttf",
    # fonts-baekmuk
    "batang.ttf",
    "dotum.ttf",
    "gulim.ttf",
    "hline.ttf",
)
# Bump when the rendering changes, so that stale caches are not reused.
RENDER_VERSION = 1
HANGUL = CharacterSet(
    name="hangul",
    pool=ks_x_1001_syllables,
    default_fonts=DEFAULT_FONTS,
    apt_packages=APT_PACKAGES,
    noun="Hangul syllable",
    nouns="Hangul syllables",
    font_label="Hangul",
    render_version=RENDER_VERSION,
)
INSTALL_COMMAND = HANGUL.install_command


def resolve_fonts(fonts=None, font_dir=None):
    """Paths of `fonts` (default `DEFAULT_FONTS`) found under `font_dir` (`/usr/share/fonts`).

    Raises:
        FileNotFoundError: a font is missing; the message names the `apt-get` command.
    """
    return resolve_set_fonts(HANGUL, fonts, font_dir)


def render_hangul(
    num_train_classes=300,
    num_test_classes=1000,
    image_size=32,
    copies=2,
    fonts=None,
    font_dir=None,
    render_seed=0,
    cache_dir=None,
    class_set="benchmark",
    **jitter,
):
    """Renders (or loads from the cache) every image of the Hangul benchmark.

    The options are `load_hangul`'s (docs/data.md); `cache_dir=False` renders without caching and
    `class_set` is `"benchmark"` or `"pretrain"`.

    Returns:
        dict with `images` uint8 `[N, S, S]`, `labels` int64 `[N]` (index into `characters`),
        `font_ids` int64 `[N]`, `characters` and `fonts` (lists of str).

    Examples:
    >>> data = render_hangul(4, 2, fonts=["NanumGothic.ttf"], cache_dir=False)  # doctest: +SKIP
    >>> data["images"].shape, len(data["characters"])  # doctest: +SKIP
    ((12, 32, 32), 6)
    """
    return render_character_set(
        HANGUL,
        num_train_classes,
        num_test_classes,
        class_set,
        render_seed,
        fonts=fonts,
        font_dir=font_dir,
        image_size=image_size,
        copies=copies,
        cache_dir=cache_dir,
        render=render_glyphs,
        **jitter,
    )


@register_dataset(
    "hangul",
    "Hangul syllables rendered from 39 Debian typefaces (offline); 300 train, 1,000 test classes",
)
def load_hangul(
    split="train",
    data_dir=None,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    num_train_classes=300,
    num_test_classes=1000,
    copies=2,
    fonts=None,
    font_dir=None,
    render_seed=0,
    resize_size=None,
    render_size=None,
    **jitter,
):
    """Loads a split of the rendered Hangul benchmark (arguments: `load_dataset`).

    `split` also takes `"pretrain"`; the options (`num_train_classes`, `fonts`, `copies`,
    `render_size`, the jitter, ...) are listed in docs/data.md.

    Raises:
        FileNotFoundError: fonts missing (the message names the `apt-get` command).

    Examples:
    >>> test = load_hangul("test")  # doctest: +SKIP
    >>> test.num_classes, len(test)  # doctest: +SKIP
    (1000, 77996)
    """
    return load_character_split(
        render_hangul,
        "hangul",
        split,
        image_size=image_size,
        val_fraction=val_fraction,
        seed=seed,
        num_train_classes=num_train_classes,
        resize_size=resize_size,
        render_size=render_size,
        num_test_classes=num_test_classes,
        copies=copies,
        fonts=fonts,
        font_dir=font_dir,
        render_seed=render_seed,
        cache_dir=data_dir,
        **jitter,
    )
