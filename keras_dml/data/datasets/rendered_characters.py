"""What `hangul` and `kanji` share: their character sets, fonts, `.npz` cache and splits."""

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
    """What a rendered-character dataset draws (`pool`, `default_fonts` from `apt_packages`), the
    cache folder and key (`name`, `render_version`) and the nouns its messages use.
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
        """The characters of `"benchmark"` (training then test) or `"pretrain"` (the rest)."""
        if class_set not in CLASS_SETS:
            raise ValueError(f"`class_set` must be one of {CLASS_SETS}. Received: {class_set!r}")
        counts = (self.pool(), num_train_classes, num_test_classes, render_seed)
        if class_set == "benchmark":
            return benchmark_classes(*counts)
        return pretrain_classes(*counts, noun=self.noun)


def resolve_fonts(character_set, fonts=None, font_dir=None):
    """Paths of `fonts` (default: the set's) found under `font_dir` (`/usr/share/fonts`).

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
    """The options a rendered-character loader takes besides the jitter (from the signatures)."""
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
    """Renders (or loads from the `.npz` cache) every image of a rendered-character class set.

    Args:
        character_set: `CharacterSet`.
        num_train_classes: int. Training characters.
        num_test_classes: int. Unseen test characters.
        class_set: str. `"benchmark"` or `"pretrain"`. Defaults to `"benchmark"`.
        render: callable. The renderer. Defaults to `render_glyphs`.
        **jitter: `max_rotation`, `scale_range`, `max_shift`; the other options (`render_seed`,
            `fonts`, `font_dir`, `image_size`, `copies`, `cache_dir`) are in docs/data.md.

    Returns:
        dict with `images` uint8 `[N, S, S]`, `labels` int64 `[N]` (index into `characters`),
        `font_ids` int64 `[N]`, `characters` and `fonts` (lists of str).

    Raises:
        ValueError: an unknown `class_set` or option, or a font drawing none of the characters.
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
        render: callable. The dataset's renderer (`render_hangul`).
        name: str. Dataset name.
        split: str. `"train"`, `"val"`, `"trainval"`, `"test"` or `"pretrain"`.
        **render_options: the renderer's options; the others are `load_hangul`'s (docs/data.md).
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
