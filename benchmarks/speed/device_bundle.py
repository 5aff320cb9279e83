"""Packs a rendered dataset for a GPU machine that has no typefaces, and unpacks it there.

The rendered datasets (`hangul`, `kanji`) draw their images from Debian typefaces, which a lent
GPU machine (no network, no TensorFlow; keras-dml trains there on JAX) does not have, and which
are too large to carry (hangul's are 114 MB). Their rendered arrays are small once compressed.
`pack`, on a machine with the fonts, renders (or reads) the splits the accuracy benchmark loads
into a fresh cache folder and writes, into one folder to carry:

- each of the loader's `.npz` cache files, xz-compressed (hangul's 32 px benchmark set: 105 MB,
  29.7 MB packed, 68 s here): the rows there train and test on exactly these arrays;
- `fonts.json`: the path and byte size of each default typeface.

`unpack`, on the GPU machine, restores the cache files under `$KERAS_DML_DATA_DIR/<dataset>` and,
where a typeface is missing, puts an empty placeholder file of the same size at its path: the
cache key names each typeface by file name and size, so the loader finds its cache and opens no
font. A load the cache does not cover (other options) fails on a placeholder instead of drawing.

The whole run there, with the wheels of keras and its two missing dependencies carried too
(`pip download --no-deps --only-binary=:all: --python-version 3.12 --platform
manylinux_2_28_x86_64 keras namex optree`), is then
`benchmarks.accuracy.parallel_rows` with `KERAS_BACKEND=jax`. A pretrained backbone is trained
here (`benchmarks.accuracy.run --regime pretrained` trains it before its first row) and its
`pretrained/` folder is passed to `parallel_rows --pretrained`.

Usage:
    python -m benchmarks.speed.device_bundle pack --dataset hangul --splits test,pretrain \
        --output runs/bundle
    python -m benchmarks.speed.device_bundle unpack --bundle runs/bundle
"""

import argparse
import json
import lzma
import os
import shutil
import tempfile

from benchmarks.accuracy.run import parse_dataset_options
from keras_dml.data.datasets import hangul, kanji
from keras_dml.data.datasets.rendered_characters import resolve_fonts, split_face

CHARACTER_SETS = {"hangul": hangul.HANGUL, "kanji": kanji.KANJI}
SUFFIX = ".npz.xz"


def pack(dataset, splits, output, image_size=32, font_dir=None, options=None):
    """Renders `splits` of `dataset` into a fresh cache and packs it into `output`.

    Args:
        dataset: str. `"hangul"` or `"kanji"`.
        splits: sequence of str. Splits the rows load (`"test"` covers every split of the
            benchmark class set; `"pretrain"` is its own set).
        output: str. Folder written: the `.npz.xz` files and `fonts.json`.
        image_size: int. Side of the rendered images. Defaults to `32`.
        font_dir: str or `None`. Folder of the fonts. Defaults to `None` (`/usr/share/fonts`).
        options: dict or `None`. The loader's other options (`--dataset-option` of
            `accuracy/run.py`), e.g. `{"fonts": [...]}`. Defaults to `None`.

    Returns:
        list of the packed file names.
    """
    from keras_dml.data import load_dataset

    os.makedirs(output, exist_ok=True)
    options = dict(options or {}, **({} if font_dir is None else {"font_dir": font_dir}))
    packed = []
    with tempfile.TemporaryDirectory() as cache:
        for split in splits:
            load_dataset(dataset, split=split, image_size=image_size, data_dir=cache, **options)
        for name in sorted(os.listdir(cache)):
            target = os.path.join(output, name + ".xz")
            with open(os.path.join(cache, name), "rb") as source, lzma.open(target, "wb") as xz:
                shutil.copyfileobj(source, xz)
            packed.append(name + ".xz")
    fonts = []
    for path in resolve_fonts(CHARACTER_SETS[dataset], options.get("fonts"), font_dir):
        path = split_face(path)[0]
        fonts.append({"path": os.path.abspath(path), "size": os.path.getsize(path)})
    with open(os.path.join(output, "fonts.json"), "w") as f:
        json.dump({"dataset": dataset, "fonts": fonts}, f, indent=1)
    return packed


def unpack(bundle, data_dir=None, root="/"):
    """Restores a bundle's cache files and puts same-size placeholders for missing fonts.

    Args:
        bundle: str. A folder written by `pack`.
        data_dir: str or `None`. Cache root. Defaults to `None` (`$KERAS_DML_DATA_DIR`, else
            `~/.keras/datasets`).
        root: str. Prefix of the fonts' paths (tests unpack under a temporary folder).
            Defaults to `"/"`.

    Returns:
        `(restored cache paths, placeholder paths)`.
    """
    with open(os.path.join(bundle, "fonts.json")) as f:
        manifest = json.load(f)
    if data_dir is None:
        data_dir = os.environ.get("KERAS_DML_DATA_DIR", os.path.join("~", ".keras", "datasets"))
    folder = os.path.join(os.path.expanduser(data_dir), manifest["dataset"])
    os.makedirs(folder, exist_ok=True)
    restored = []
    for name in sorted(os.listdir(bundle)):
        if name.endswith(SUFFIX):
            path = os.path.join(folder, name[: -len(".xz")])
            with lzma.open(os.path.join(bundle, name)) as source, open(path, "wb") as target:
                shutil.copyfileobj(source, target)
            restored.append(path)
    placeholders = []
    for font in manifest["fonts"]:
        path = os.path.join(root, font["path"].lstrip("/"))
        if os.path.exists(path):
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.truncate(font["size"])
        placeholders.append(path)
    return restored, placeholders


def build_parser():
    """The command line of this script (also read by the README command checks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="render and pack a dataset's cache")
    packing.add_argument("--dataset", choices=sorted(CHARACTER_SETS), default="hangul")
    packing.add_argument("--splits", default="test", help="comma-separated, e.g. test,pretrain")
    packing.add_argument("--image-size", type=int, default=32)
    packing.add_argument("--font-dir", default=None)
    packing.add_argument(
        "--dataset-option", action="append", default=[], metavar="KEY=JSON", help="as accuracy.run"
    )
    packing.add_argument("--output", required=True)
    unpacking = commands.add_parser("unpack", help="restore a packed cache (the GPU machine)")
    unpacking.add_argument("--bundle", required=True)
    unpacking.add_argument("--data-dir", default=None)
    unpacking.add_argument("--root", default="/")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "pack":
        splits = [s for s in args.splits.split(",") if s]
        options = parse_dataset_options(args.dataset_option)
        packed = pack(args.dataset, splits, args.output, args.image_size, args.font_dir, options)
        print(f"[bundle] packed {packed} and fonts.json into {args.output}")
    else:
        restored, placeholders = unpack(args.bundle, args.data_dir, args.root)
        print(f"[bundle] restored {restored}; {len(placeholders)} font placeholders")


if __name__ == "__main__":
    main()
