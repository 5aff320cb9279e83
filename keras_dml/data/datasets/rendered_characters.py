"""Datasets of characters rendered from typefaces: their fonts, cached arrays and class splits.

The machinery shared by `hangul` and `kanji`. A `CharacterSet` names what a dataset renders (its
class choice, default fonts and the Debian packages holding them); `render_character_set` renders
the chosen characters with every font (`glyphs.render_glyphs`) and caches the arrays as `.npz`,
keyed by every setting; `load_character_split` cuts a split out of them: the training classes
(`"trainval"`, of which `val_fraction` are held out as `"val"`), the unseen test classes, or the
`"pretrain"` classes in neither.
"""

import dataclasses
import hashlib
import inspect
import json
import os
import tempfile
from collections.abc import Callable

import numpy as np

from keras_dml.data.datasets.character_classes import benchmark_classes, pretrain_classes
from keras_dml.data.datasets.glyphs import find_font_files, render_glyphs, split_face
from keras_dml.data.datasets.splits import SPLITS, check_split, make_split, select_classes
from keras_dml.utils.suggestions import did_you_mean_keys

DEFAULT_FONT_DIR = "/usr/share/fonts"
CLASS_SETS = ("benchmark", "pretrain")
# The pose options of `render_glyphs`, passed through `**jitter`.
JITTER_OPTIONS = ("max_rotation", "scale_range", "max_shift")
# The other options a rendered-character dataset's loader takes (`load_character_split` and the
# renderer), named when an option is misspelt.
OPTIONS = (
    "image_size",
    "val_fraction",
    "seed",
    "num_train_classes",
    "num_test_classes",
    "resize_size",
    "copies",
    "fonts",
    "font_dir",
    "render_seed",
)


@dataclasses.dataclass(frozen=True)
class CharacterSet:
    """What a rendered-character dataset draws, and how its messages name it.

    Attributes:
        name: str. Dataset name; also the cache folder and the cache files' prefix.
        pool: callable `() -> list of str`: every character that can be a class, in a fixed
            order (the seeded class choice permutes it).
        default_fonts: tuple of str. Font file names used when `fonts=None`.
        apt_packages: tuple of str. Debian packages holding `default_fonts`.
        noun: str. A character in errors ("No Hangul syllable is left"). Defaults to `name`.
        nouns: str. Characters in errors. Defaults to `noun`.
        font_label: str. The fonts in errors ("Hangul fonts not found"). Defaults to `name`.
        render_version: int. Part of the cache key: bump it when the rendering changes.
            Defaults to `1`.
    """

    name: str
    pool: Callable
    default_fonts: tuple
    apt_packages: tuple
    noun: str = ""
    nouns: str = ""
    font_label: str = ""
    render_version: int = 1

    def __post_init__(self):
        # The wording defaults (frozen: set through object.__setattr__).
        object.__setattr__(self, "noun", self.noun or self.name)
        object.__setattr__(self, "nouns", self.nouns or self.noun)
        object.__setattr__(self, "font_label", self.font_label or self.name)

    @property
    def install_command(self):
        """The `apt-get install` line of the default fonts."""
        return f"apt-get install {' '.join(self.apt_packages)}"

    def classes(self, num_train_classes, num_test_classes, render_seed=0, class_set="benchmark"):
        """The characters of a class set: `"benchmark"` (training then test) or `"pretrain"`.

        Args:
            num_train_classes: int. Training characters.
            num_test_classes: int. Unseen test characters.
            render_seed: int. Seed of the permutation of the pool. Defaults to `0`.
            class_set: str. `"benchmark"` or `"pretrain"` (the characters in neither).
                Defaults to `"benchmark"`.

        Returns:
            list of str (`character_classes.benchmark_classes` / `pretrain_classes`).
        """
        if class_set not in CLASS_SETS:
            raise ValueError(f"`class_set` must be one of {CLASS_SETS}. Received: {class_set!r}")
        counts = (self.pool(), num_train_classes, num_test_classes, render_seed)
        if class_set == "benchmark":
            return benchmark_classes(*counts)
        return pretrain_classes(*counts, noun=self.noun)


def resolve_fonts(character_set, fonts=None, font_dir=None):
    """Font file paths for `fonts` (default: the set's default fonts), looked up under `font_dir`.

    Args:
        character_set: `CharacterSet`.
        fonts: sequence of font file names or paths (`"file.ttc#N"`: face N of a collection).
            Defaults to `None` (`character_set.default_fonts`).
        font_dir: str. Folder searched recursively. Defaults to `None` (`/usr/share/fonts`).

    Returns:
        list of str paths, in the order of `fonts`.

    Raises:
        FileNotFoundError: a font is missing; the message names the `apt-get` command.
    """
    names = list(character_set.default_fonts if fonts is None else fonts)
    if not names:
        raise ValueError("`fonts` is empty; pass font files or `None` for the default fonts.")
    font_dir = DEFAULT_FONT_DIR if font_dir is None else font_dir
    found, missing = find_font_files(names, font_dir)
    if missing:
        raise FileNotFoundError(
            f"{len(missing)} of {len(names)} {character_set.font_label} fonts not found under "
            f"{font_dir!r} (first: {missing[:3]}). Install them with "
            f"`{character_set.install_command}`, or pass `fonts=` (font files) and `font_dir=`."
        )
    return found


def loader_options():
    """The options a rendered-character loader takes besides the jitter, read from the
    signatures of `load_character_split` and `render_character_set` (named in the error for a
    misspelt option, so the list cannot drift from the code)."""
    internal = {"render", "name", "split", "render_options", "character_set", "class_set"}
    internal |= {"cache_dir", "jitter"}
    names = [*inspect.signature(load_character_split).parameters]
    names += [*inspect.signature(render_character_set).parameters]
    return sorted(set(names) - internal)


def render_character_set(
    character_set,
    num_train_classes,
    num_test_classes,
    class_set="benchmark",
    render_seed=0,
    *,
    fonts=None,
    font_dir=None,
    image_size=32,
    copies=2,
    cache_dir=None,
    render=render_glyphs,
    **jitter,
):
    """Renders (or loads from the cache) every image of a rendered-character class set.

    Args:
        character_set: `CharacterSet`.
        num_train_classes: int. Training characters.
        num_test_classes: int. Unseen test characters.
        class_set: str. `"benchmark"` (the training then the test characters) or `"pretrain"`
            (the characters in neither). Defaults to `"benchmark"`.
        render_seed: int. Seed of the class choice and the poses. Defaults to `0`.
        fonts: sequence of font names or paths. Defaults to `None` (the set's default fonts).
        font_dir: str. Folder holding the fonts. Defaults to `None` (`/usr/share/fonts`).
        image_size: int. Side of the images. Defaults to `32`.
        copies: int. Jittered poses per (character, typeface). Defaults to `2`.
        cache_dir: str or `False`. Folder of the `.npz` cache; `False` renders without
            caching. Defaults to `None` (`$KERAS_DML_DATA_DIR/<name>`, else
            `~/.keras/datasets/<name>`).
        render: callable. The renderer, called like `glyphs.render_glyphs`. Defaults to
            `render_glyphs`.
        **jitter: `max_rotation`, `scale_range`, `max_shift` of `render_glyphs`.

    Returns:
        dict with `images` uint8 `[N, S, S]`, `labels` int64 `[N]` (index into `characters`;
        for the benchmark set the first `num_train_classes` are the training classes),
        `font_ids` int64 `[N]`, `characters` (list of str) and `fonts` (list of font names).

    Raises:
        ValueError: an unknown `class_set` or option, or a font drawing none of the chosen
            characters.
    """
    unknown = sorted(set(jitter) - set(JITTER_OPTIONS))
    if unknown:
        options = loader_options()
        hint = did_you_mean_keys(unknown, (*options, *JITTER_OPTIONS))
        raise ValueError(
            f"Dataset `{character_set.name}` has no option(s) {unknown}.{hint} Its options: "
            f"{options} and the jitter {JITTER_OPTIONS}. "
            f"Received: {', '.join(f'{k}={jitter[k]!r}' for k in unknown)}"
        )
    paths = resolve_fonts(character_set, fonts, font_dir)
    characters = character_set.classes(num_train_classes, num_test_classes, render_seed, class_set)
    path = None
    if cache_dir is not False:
        path = _cache_path(
            character_set, cache_dir, characters, paths, image_size, copies, render_seed, jitter
        )
        if os.path.isfile(path):
            with np.load(path) as stored:
                return _as_dict(stored, characters, paths)
    rendered = render(
        paths, characters, image_size=image_size, copies=copies, seed=render_seed, **jitter
    )
    unused = sorted(set(range(len(paths))) - set(rendered["font_ids"].tolist()))
    if unused:
        raise ValueError(
            f"Fonts without any of the chosen {character_set.nouns}: "
            f"{[os.path.basename(paths[i]) for i in unused]}. Remove them from `fonts`."
        )
    if path is not None:
        _save_atomically(path, rendered)
    return _as_dict(rendered, characters, paths)


def _cache_path(character_set, cache_dir, characters, paths, image_size, copies, seed, jitter):
    """The `.npz` file of these settings: a digest of everything the images depend on."""
    key = {
        "version": character_set.render_version,
        "fonts": [(os.path.basename(p), os.path.getsize(split_face(p)[0])) for p in paths],
        "characters": "".join(characters),
        "image_size": int(image_size),
        "copies": int(copies),
        "render_seed": int(seed),
        "jitter": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(jitter.items())},
    }
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    if cache_dir is None:
        base = os.environ.get("KERAS_DML_DATA_DIR", os.path.join("~", ".keras", "datasets"))
        cache_dir = os.path.join(os.path.expanduser(base), character_set.name)
    name = f"{character_set.name}_{int(image_size)}px_{len(characters)}classes_{digest}.npz"
    return os.path.join(os.path.expanduser(str(cache_dir)), name)


def _save_atomically(path, arrays):
    """Writes `arrays` as `.npz` at `path` through a temporary file (no half-written cache)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handle, temporary = tempfile.mkstemp(suffix=".npz", dir=os.path.dirname(path))
    with os.fdopen(handle, "wb") as file:
        np.savez(file, **arrays)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def _as_dict(arrays, characters, paths):
    return {
        "images": np.asarray(arrays["images"]),
        "labels": np.asarray(arrays["labels"]),
        "font_ids": np.asarray(arrays["font_ids"]),
        "characters": list(characters),
        "fonts": [os.path.basename(p) for p in paths],
    }


def load_character_split(
    render,
    name,
    split,
    image_size=None,
    val_fraction=0.15,
    seed=0,
    num_train_classes=300,
    resize_size=None,
    render_size=None,
    **render_options,
):
    """One split of a rendered-character dataset, as an in-memory `ImageDataset`.

    Args:
        render: callable. The dataset's renderer (`render_hangul`), called with
            `num_train_classes`, `image_size`, `class_set` and `render_options`.
        name: str. Dataset name.
        split: str. `"train"`, `"val"`, `"trainval"`, `"test"` or `"pretrain"`.
        image_size: int. Side of the rendered images and default crop. Defaults to `None` (32).
        val_fraction: float. Training classes held out as `"val"`. Defaults to `0.15`.
        seed: int. Seed of the held-out classes. Defaults to `0`.
        num_train_classes: int. Training characters (train + val). Defaults to `300`.
        resize_size: int. Shorter side before cropping. Defaults to `None`.
        render_size: int. Side the characters are drawn at when it is not `image_size`: the
            pipelines then resize the images to `image_size` (e.g. 32 px renders upscaled to the
            papers' 224 px, which the accuracy benchmark's papers'-size rows train on, from the
            small 32 px cache). Defaults to `None` (`image_size`).
        **render_options: the renderer's other options (`num_test_classes`, `fonts`, ...).

    Returns:
        `ImageDataset` with uint8 images `[N, render_size, render_size, 1]` and `image_size`
        as its crop size; class names are the characters.
    """
    check_split(split, (*SPLITS, "pretrain"), name)
    size = int(image_size or 32)
    data = render(
        num_train_classes=num_train_classes,
        image_size=int(render_size or size),
        class_set="pretrain" if split == "pretrain" else "benchmark",
        **render_options,
    )
    if split == "pretrain":
        classes = np.arange(len(data["characters"]))
    else:
        train = np.arange(int(num_train_classes))
        test = np.arange(int(num_train_classes), len(data["characters"]))
        classes = select_classes(split, train, test, val_fraction, seed, name)
    return make_split(
        name,
        split,
        data["labels"],
        classes,
        class_names=data["characters"],
        images=data["images"][..., None],
        image_size=size,
        resize_size=resize_size,
        verify=False,
    )
