"""Hangul syllables rendered from Debian's Korean typefaces: a many-class offline benchmark.

One class per syllable, drawn from the 2,350 common syllables of KS X 1001 (every Korean font
covers them); every image is one typeface at a small random pose. With the default 39 typefaces
and 2 poses each, a class has 78 images. Classes are split by a seeded permutation into training
classes (`"trainval"`, of which `val_fraction` are held out as `"val"`) and unseen test classes.
The rendered arrays are cached as `.npz`, so only the first load renders (about 11 s of CPU time
on one core).
"""

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
    """Font file paths for `fonts` (default: `DEFAULT_FONTS`), looked up under `font_dir`.

    Args:
        fonts: sequence of font file names or paths. Defaults to `None` (`DEFAULT_FONTS`).
        font_dir: str. Folder searched recursively. Defaults to `None` (`/usr/share/fonts`).

    Returns:
        list of str paths, in the order of `fonts`.

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

    Args:
        num_train_classes: int. Training syllables. Defaults to `300`.
        num_test_classes: int. Unseen test syllables. Defaults to `1000`.
        image_size: int. Side of the images. Defaults to `32`.
        copies: int. Jittered poses per (syllable, typeface). Defaults to `2`.
        fonts: sequence of font names or paths. Defaults to `None` (`DEFAULT_FONTS`).
        font_dir: str. Folder holding the fonts. Defaults to `None` (`/usr/share/fonts`).
        render_seed: int. Seed of the class choice and the poses. Defaults to `0`.
        cache_dir: str or `False`. Folder of the `.npz` cache; `False` renders without
            caching. Defaults to `None` (`$KERAS_DML_DATA_DIR/hangul`, else
            `~/.keras/datasets/hangul`).
        class_set: str. `"benchmark"` (the training then the test syllables) or `"pretrain"`
            (the syllables in neither, `hangul_pretrain_classes`). Defaults to `"benchmark"`.
        **jitter: `max_rotation`, `scale_range`, `max_shift` of `render_glyphs`.

    Returns:
        dict with `images` uint8 `[N, S, S]`, `labels` int64 `[N]` (index into `characters`;
        for the benchmark set the first `num_train_classes` are the training classes),
        `font_ids` int64 `[N]`,
        `characters` (list of str) and `fonts` (list of font file names).

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
    """Loads a split of the rendered Hangul benchmark (one class per syllable).

    The default 1,300 classes x 39 typefaces x 2 poses are 101,396 images of 32x32 grey (white glyph
    on black; Baekmuk Dotum and Headline have an empty glyph for one test syllable, which therefore
    has 74 images), rendered once (about 11 s of CPU time) and cached. Training and test syllables
    are disjoint; `"val"` holds out `val_fraction` of the training syllables (45 of 300 by default).

    Args:
        split: str. `"train"`, `"val"`, `"trainval"`, `"test"`, or `"pretrain"`: every
            syllable in neither the training nor the test set (1,050 by default), for
            pretraining a backbone on disjoint classes. Defaults to `"train"`.
        data_dir: str. Cache folder of the rendered arrays. Defaults to `None`
            (`$KERAS_DML_DATA_DIR/hangul`, else `~/.keras/datasets/hangul`).
        image_size: int. Side of the rendered images and default crop. Defaults to `None` (32).
        val_fraction: float. Training classes held out as `"val"`. Defaults to `0.15`.
        seed: int. Seed of the held-out classes. Defaults to `0`.
        num_train_classes: int. Training syllables (train + val). Defaults to `300`.
        num_test_classes: int. Unseen test syllables. Defaults to `1000`.
        copies: int. Jittered poses per (syllable, typeface). Defaults to `2`.
        fonts: sequence of font file names or paths. Defaults to `None` (`DEFAULT_FONTS`,
            from `apt-get install fonts-nanum fonts-unfonts-core fonts-unfonts-extra
            fonts-baekmuk`).
        font_dir: str. Folder searched for `fonts`. Defaults to `None` (`/usr/share/fonts`).
        render_seed: int. Seed of the syllable choice and the poses (not of `"val"`).
            Defaults to `0`.
        resize_size: int. Shorter side before cropping. Defaults to `None`.
        render_size: int. Side the syllables are drawn at, resized to `image_size` by the
            pipelines (e.g. 32 with `image_size=224`: upscaled 32 px renders). Defaults to
            `None` (`image_size`).
        **jitter: `max_rotation` (degrees, default 10), `scale_range` (default (0.8, 1.05)),
            `max_shift` (fraction of the side, default 0.08), see `render_glyphs`.

    Returns:
        In-memory `ImageDataset` with uint8 images `[N, image_size, image_size, 1]`; class
        names are the syllables.

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
