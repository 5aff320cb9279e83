"""Kanji rendered from Debian's Japanese and Chinese typefaces: a second many-class benchmark.

One class per kanji, drawn from the 2,965 level-1 kanji of JIS X 0208 (`jis_x_0208_level1_kanji`);
every image is one typeface at a small random pose. Every one of the 32 default typefaces maps and
draws every one of the 2,965 kanji, so each class has 32 x `copies` images (64 by default): the
inventory is fixed by the standard, not by the fonts. Fonts passed with `fonts=` draw the kanji
they cover; a class then has fewer images only if a font lacks it (`font_ids` tells which font
drew each image). Classes, splits, options and the `.npz` cache work as for `hangul`
(`rendered_characters`).
"""

from keras_dml.data.datasets.glyphs import render_glyphs
from keras_dml.data.datasets.kanji_classes import jis_x_0208_level1_kanji
from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.rendered_characters import (
    CharacterSet,
    load_character_split,
    render_character_set,
)

# Font files -> the Debian package holding them. Each is a distinct design or weight and draws
# all 2,965 kanji; fonts sharing another's kanji outlines (IPA / Takao / Monapo and IPAex,
# VL Gothic and M+, the proportional and variant files of one family) are left out.
PACKAGE_FONTS = {
    "fonts-ipaexfont-gothic": ("ipaexg.ttf",),
    "fonts-ipaexfont-mincho": ("ipaexm.ttf",),
    "fonts-mplus": (
        "Mplus1-Thin.otf",
        "Mplus1-Light.otf",
        "Mplus1-Regular.otf",
        "Mplus1-Medium.otf",
        "Mplus1-Bold.otf",
        "Mplus1-Black.otf",
    ),
    "fonts-horai-umefont": ("ume-tgo4.ttf", "ume-tmo3.ttf"),
    "fonts-hanazono": ("HanaMinA.ttf",),
    "fonts-noto-cjk": (  # Face 0 of each collection: Japanese glyph forms.
        "NotoSansCJK-Regular.ttc",
        "NotoSansCJK-Bold.ttc",
        "NotoSerifCJK-Regular.ttc",
        "NotoSerifCJK-Bold.ttc",
    ),
    "fonts-wqy-microhei": ("wqy-microhei.ttc",),
    "fonts-wqy-zenhei": ("wqy-zenhei.ttc",),
    "fonts-motoya-l-cedar": ("MTLc3m.ttf",),
    "fonts-motoya-l-maruberi": ("MTLmr3m.ttf",),
    "fonts-konatu": ("Konatu.ttf",),
    "fonts-kiloji": ("kiloji.ttf", "kiloji_b.ttf", "kiloji_d.ttf"),
    "fonts-sawarabi-gothic": ("sawarabi-gothic-medium.ttf",),
    "fonts-seto": ("setofont.ttf",),
    # Not its regular script face kouzan-mouhitsu.ttf, whose glyph of 綻 is empty.
    "fonts-kouzan-mouhitsu": ("kouzan-mouhitsu-gyosho.ttf",),
    "fonts-morisawa-bizud-gothic": ("BIZUDGothic-Regular.ttf", "BIZUDGothic-Bold.ttf"),
    "fonts-morisawa-bizud-mincho": ("BIZUDMincho-Regular.ttf",),
    "fonts-dejima-mincho": ("dejima-mincho-r227.ttf",),
    "fonts-yozvox-yozfont-cute": ("YOzRC_.ttf", "YOzBC_.ttf"),
}
APT_PACKAGES = tuple(PACKAGE_FONTS)
DEFAULT_FONTS = tuple(font for fonts in PACKAGE_FONTS.values() for font in fonts)
KANJI = CharacterSet("kanji", jis_x_0208_level1_kanji, DEFAULT_FONTS, APT_PACKAGES)
INSTALL_COMMAND = KANJI.install_command


def render_kanji(num_train_classes=300, num_test_classes=1000, class_set="benchmark", **options):
    """Renders (or loads from the cache) every image of the kanji benchmark.

    `rendered_characters.render_character_set` for `KANJI`: the seeded choice of training then
    test kanji (`class_set="benchmark"`) or the kanji in neither (`"pretrain"`), every one drawn
    with every font.

    Args:
        num_train_classes: int. Training kanji. Defaults to `300`.
        num_test_classes: int. Unseen test kanji. Defaults to `1000`.
        class_set: str. `"benchmark"` or `"pretrain"`. Defaults to `"benchmark"`.
        **options: `image_size` (32), `copies` (2), `fonts` (`DEFAULT_FONTS`), `font_dir`,
            `render_seed` (0), `cache_dir` (`$KERAS_DML_DATA_DIR/kanji`, else
            `~/.keras/datasets/kanji`; `False`: no cache) and the jitter of `render_glyphs`.

    Returns:
        dict with `images` uint8 `[N, S, S]`, `labels` int64 `[N]` (index into `characters`),
        `font_ids` int64 `[N]`, `characters` (list of str) and `fonts` (list of font names).

    Raises:
        FileNotFoundError: fonts missing (the message names the `apt-get` command).

    Examples:
    >>> data = render_kanji(4, 2, fonts=["ipaexg.ttf"], cache_dir=False)  # doctest: +SKIP
    >>> data["images"].shape, data["characters"][:3]  # doctest: +SKIP
    ((12, 32, 32), ['索', '軸', '拙'])
    """
    return render_character_set(
        KANJI,
        num_train_classes,
        num_test_classes,
        class_set=class_set,
        render=render_glyphs,
        **options,
    )


@register_dataset(
    "kanji",
    "JIS level-1 kanji rendered from 32 Debian typefaces (offline); 300 train, 1,000 test classes",
)
def load_kanji(split="train", data_dir=None, num_train_classes=300, **options):
    """Loads a split of the rendered kanji benchmark (one class per kanji).

    The default 1,300 classes x 32 typefaces x 2 poses are 83,200 images of 32x32 grey (white
    glyph on black), 64 per class, rendered once and cached. Training and test kanji are
    disjoint; `"val"` holds out `val_fraction` of the training kanji (45 of 300 by default).
    The options are `hangul`'s (`rendered_characters.load_character_split`). Without the fonts,
    the `FileNotFoundError` names the `apt-get` command.

    Args:
        split: str. `"train"`, `"val"`, `"trainval"`, `"test"`, or `"pretrain"`: every kanji
            in neither the training nor the test set (1,665 by default). Defaults to `"train"`.
        data_dir: str. Cache folder of the rendered arrays. Defaults to `None`
            (`$KERAS_DML_DATA_DIR/kanji`, else `~/.keras/datasets/kanji`).
        num_train_classes: int. Training kanji (train + val). Defaults to `300`.
        **options: `image_size` (32), `val_fraction` (0.15), `seed` (of `"val"`, 0),
            `resize_size`, `render_size` (drawn at this side, resized to `image_size` by the
            pipelines; default `image_size`), and `render_kanji`'s `num_test_classes` (1000),
            `copies` (poses per typeface, 2), `fonts` (`DEFAULT_FONTS`, from
            `INSTALL_COMMAND`), `font_dir`, `render_seed` (kanji choice and poses, 0) and
            jitter (`max_rotation` 10 degrees, `scale_range` (0.8, 1.05), `max_shift` 0.08 of
            the side).

    Returns:
        In-memory `ImageDataset` (uint8 images `[N, image_size, image_size, 1]`, the kanji as
        class names).

    Examples:
    >>> test = load_kanji("test")  # doctest: +SKIP
    >>> test.num_classes, len(test), test.class_names[:3]  # doctest: +SKIP
    (1000, 64000, ['朕', '司', '琴'])
    """
    return load_character_split(
        render_kanji,
        "kanji",
        split,
        num_train_classes=num_train_classes,
        cache_dir=data_dir,
        **options,
    )
