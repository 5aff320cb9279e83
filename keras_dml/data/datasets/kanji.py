"""Kanji rendered from Debian's Japanese and Chinese typefaces: a second many-class benchmark."""

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
    """Renders (or loads from the cache) every image of the kanji benchmark (as `render_hangul`).

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
    """Loads a split of the rendered kanji benchmark (arguments: `load_hangul`'s).

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
