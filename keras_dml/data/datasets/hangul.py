"""Hangul syllables rendered from Debian's Korean typefaces: a many-class offline benchmark.

One class per syllable, drawn from the 2,350 common syllables of KS X 1001 (every Korean font
covers them); every image is one typeface at a small random pose. With the default 39 typefaces
and 2 poses each, a class has 78 images. Classes are split by a seeded permutation into training
classes (`"trainval"`, of which `val_fraction` are held out as `"val"`) and unseen test classes.
The rendered arrays are cached as `.npz`, so only the first load renders (about 11 s of CPU time
on one core).
"""

import hashlib
import json
import os
import tempfile

import numpy as np

from keras_dml.data.datasets.glyphs import find_font_files, render_glyphs
from keras_dml.data.datasets.hangul_classes import (  # noqa: F401 (re-exported)
    hangul_classes,
    hangul_pretrain_classes,
    ks_x_1001_syllables,
)
from keras_dml.data.datasets.registry import register_dataset
from keras_dml.data.datasets.splits import SPLITS, check_split, make_split, select_classes

# Debian packages holding DEFAULT_FONTS; the error for missing fonts names this command.
APT_PACKAGES = ("fonts-nanum", "fonts-unfonts-core", "fonts-unfonts-extra", "fonts-baekmuk")
INSTALL_COMMAND = f"apt-get install {' '.join(APT_PACKAGES)}"
DEFAULT_FONT_DIR = "/usr/share/fonts"
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
CLASS_SETS = ("benchmark", "pretrain")


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
    names = list(DEFAULT_FONTS if fonts is None else fonts)
    if not names:
        raise ValueError("`fonts` is empty; pass font files or `None` for the default fonts.")
    font_dir = DEFAULT_FONT_DIR if font_dir is None else font_dir
    found, missing = find_font_files(names, font_dir)
    if missing:
        raise FileNotFoundError(
            f"{len(missing)} of {len(names)} Hangul fonts not found under {font_dir!r} "
            f"(first: {missing[:3]}). Install them with `{INSTALL_COMMAND}`, or pass `fonts=` "
            "(font files) and `font_dir=`."
        )
    return found


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
    if class_set not in CLASS_SETS:
        raise ValueError(f"`class_set` must be one of {CLASS_SETS}. Received: {class_set!r}")
    paths = resolve_fonts(fonts, font_dir)
    choose = hangul_classes if class_set == "benchmark" else hangul_pretrain_classes
    characters = choose(num_train_classes, num_test_classes, render_seed)
    key = {
        "version": RENDER_VERSION,
        "fonts": [(os.path.basename(p), os.path.getsize(p)) for p in paths],
        "characters": "".join(characters),
        "image_size": int(image_size),
        "copies": int(copies),
        "render_seed": int(render_seed),
        "jitter": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(jitter.items())},
    }
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    path = None
    if cache_dir is not False:
        if cache_dir is None:
            base = os.environ.get("KERAS_DML_DATA_DIR", os.path.join("~", ".keras", "datasets"))
            cache_dir = os.path.join(os.path.expanduser(base), "hangul")
        path = os.path.join(
            os.path.expanduser(str(cache_dir)),
            f"hangul_{int(image_size)}px_{len(characters)}classes_{digest}.npz",
        )
        if os.path.isfile(path):
            with np.load(path) as stored:
                return _as_dict(stored, characters, paths)
    rendered = render_glyphs(
        paths, characters, image_size=image_size, copies=copies, seed=render_seed, **jitter
    )
    unused = sorted(set(range(len(paths))) - set(rendered["font_ids"].tolist()))
    if unused:
        raise ValueError(
            f"Fonts without any of the chosen Hangul syllables: "
            f"{[os.path.basename(paths[i]) for i in unused]}. Remove them from `fonts`."
        )
    if path is not None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle, temporary = tempfile.mkstemp(suffix=".npz", dir=os.path.dirname(path))
        with os.fdopen(handle, "wb") as file:
            np.savez(file, **rendered)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    return _as_dict(rendered, characters, paths)


def _as_dict(arrays, characters, paths):
    return {
        "images": np.asarray(arrays["images"]),
        "labels": np.asarray(arrays["labels"]),
        "font_ids": np.asarray(arrays["font_ids"]),
        "characters": list(characters),
        "fonts": [os.path.basename(p) for p in paths],
    }


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
    check_split(split, (*SPLITS, "pretrain"), "hangul")
    size = int(image_size or 32)
    data = render_hangul(
        num_train_classes,
        num_test_classes,
        image_size=size,
        copies=copies,
        fonts=fonts,
        font_dir=font_dir,
        render_seed=render_seed,
        cache_dir=data_dir,
        class_set="pretrain" if split == "pretrain" else "benchmark",
        **jitter,
    )
    if split == "pretrain":
        classes = np.arange(len(data["characters"]))
    else:
        train = np.arange(int(num_train_classes))
        test = np.arange(int(num_train_classes), len(data["characters"]))
        classes = select_classes(split, train, test, val_fraction, seed, "hangul")
    return make_split(
        "hangul",
        split,
        data["labels"],
        classes,
        class_names=data["characters"],
        images=data["images"][..., None],
        image_size=size,
        resize_size=resize_size,
        verify=False,
    )
