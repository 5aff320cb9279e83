"""Renders characters from font files into small jittered greyscale images (PIL + fontTools)."""

import os

import numpy as np

# Fraction of the image side covered by the longer side of a glyph's ink box (before jitter).
INK_FILL = 0.8
# Supersampling of the drawing canvas; the final image is a box-filtered downscale of it.
SUPERSAMPLE = 2


def split_face(font):
    """Splits a font `"path#N"` into its file and face index (`"path"` alone is face 0).

    Examples:
    >>> split_face("NotoSansCJK-Regular.ttc#2")
    ('NotoSansCJK-Regular.ttc', 2)
    """
    file, mark, face = str(font).rpartition("#")
    if mark and file and face.isdigit():
        return file, int(face)
    return str(font), 0


def count_faces(path):
    """Number of faces in a font file: a collection's (`ttcf` header) count, else 1."""
    with open(path, "rb") as file:
        header = file.read(12)
    return int.from_bytes(header[8:12], "big") if header[:4] == b"ttcf" else 1


def find_font_files(names, font_dir):
    """`(found paths, missing names)` of font file names (`"#N"`: a face) under `font_dir`.

    Raises:
        ValueError: a face index beyond the faces of its file.
    """
    available = {}
    for root, _, files in os.walk(os.path.expanduser(str(font_dir))):
        for file in files:
            available.setdefault(file, os.path.join(root, file))
    found, missing = [], []
    for name in names:
        name = str(name)
        file, face = split_face(name)
        path = file if os.path.isfile(file) else available.get(file)
        if path is None:
            missing.append(name)
            continue
        faces = count_faces(path)
        if face >= faces:
            raise ValueError(
                f"Font {name!r} names face {face}, but {file!r} has {faces} face(s); "
                f"use `{file}#0` to `{file}#{faces - 1}`."
            )
        found.append(f"{path}#{face}" if face else path)
    return found, missing


def font_coverage(path, codepoints):
    """Which `codepoints` the character map of font `path` (`"file.ttc#N"`: face N) covers.

    Examples:
    >>> font_coverage("/usr/share/fonts/truetype/nanum/NanumGothic.ttf", [0xAC00, 0x41])
    ... # doctest: +SKIP
    array([ True,  True])
    """
    from fontTools.ttLib import TTFont

    file, face = split_face(path)
    font = TTFont(file, lazy=True, fontNumber=face)
    try:
        cmap = font.getBestCmap() or {}
    finally:
        font.close()
    return np.isin(np.asarray(codepoints, dtype=np.int64), np.fromiter(cmap, np.int64))


def draw_glyph(font, character, canvas):
    """Draws `character` in white on a black square `canvas` x `canvas` PIL image (mode "L")."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (canvas, canvas), 0)
    ImageDraw.Draw(image).text(
        (canvas / 2, canvas / 2), character, fill=255, font=font, anchor="mm"
    )
    return image


def glyph_transform(bbox, image_size, angle, scale, shift):
    """PIL affine data placing an ink box at a pose (centre + `shift`, scaled, rotated)."""
    left, top, right, bottom = bbox
    ink = max(right - left, bottom - top, 1)
    zoom = INK_FILL * scale * image_size / ink  # output pixels per canvas pixel
    theta = np.deg2rad(angle)
    cos, sin = np.cos(theta) / zoom, np.sin(theta) / zoom
    cx_out, cy_out = image_size / 2 + shift[0], image_size / 2 + shift[1]
    cx_in, cy_in = (left + right) / 2, (top + bottom) / 2
    # input = R(-angle) / zoom @ (output - centre_out) + centre_in (y axis points down).
    a, b, d, e = cos, -sin, sin, cos
    c = cx_in - a * cx_out - b * cy_out
    f = cy_in - d * cx_out - e * cy_out
    return (a, b, c, d, e, f)


def render_glyphs(
    font_paths,
    characters,
    image_size=32,
    copies=2,
    max_rotation=10.0,
    scale_range=(0.8, 1.05),
    max_shift=0.08,
    seed=0,
):
    """Renders every character with every font that draws it, `copies` jittered poses each.

    Args:
        font_paths: sequence of str. Font files (`"file.ttc#N"`: face N of a collection).
        characters: sequence of single-character str.
        image_size: int. Side of the square output images. Defaults to `32`.
        copies: int. Jittered renderings per (character, font). Defaults to `2`.
        max_rotation: float. Largest rotation, in degrees. Defaults to `10.0`.
        scale_range: (min, max). Size factor of the ink box. Defaults to `(0.8, 1.05)`.
        max_shift: float. Largest shift per axis, a fraction of the side. Defaults to `0.08`.
        seed: int. Seed of the poses. Defaults to `0`.

    Returns:
        dict with `images` uint8 `[N, image_size, image_size]` (white on black), `labels` and
        `font_ids` int64 `[N]` (indices into `characters` and `font_paths`).

    Raises:
        ValueError: bad sizes or jitter ranges, or a character no font can draw.

    Examples:
    >>> out = render_glyphs(["NanumGothic.ttf"], ["가"], image_size=16)  # doctest: +SKIP
    >>> out["images"].shape  # doctest: +SKIP
    (2, 16, 16)
    """
    from PIL import Image, ImageFont

    image_size, copies = int(image_size), int(copies)
    if image_size < 8 or copies < 1:
        raise ValueError(
            "`image_size` must be >= 8 and `copies` >= 1. "
            f"Received: image_size={image_size}, copies={copies}"
        )
    low, high = (float(s) for s in scale_range)
    if not 0 < low <= high or max_rotation < 0 or not 0 <= max_shift < 0.5:
        raise ValueError(
            "Need 0 < scale_range[0] <= scale_range[1], max_rotation >= 0 and "
            f"0 <= max_shift < 0.5. Received: scale_range={scale_range}, "
            f"max_rotation={max_rotation}, max_shift={max_shift}"
        )
    codepoints = np.array([ord(c) for c in characters], np.int64)
    covered = np.stack([font_coverage(p, codepoints) for p in font_paths])  # [fonts, chars]
    big = image_size * SUPERSAMPLE
    canvas = 2 * big
    fonts = [
        ImageFont.truetype(file, size=big, index=face) for file, face in map(split_face, font_paths)
    ]
    rng = np.random.default_rng(seed)
    poses = np.stack(
        [
            rng.uniform(-max_rotation, max_rotation, (len(characters), len(fonts), copies)),
            rng.uniform(low, high, (len(characters), len(fonts), copies)),
            rng.uniform(-max_shift, max_shift, (len(characters), len(fonts), copies)) * big,
            rng.uniform(-max_shift, max_shift, (len(characters), len(fonts), copies)) * big,
        ],
        axis=-1,
    )
    images, labels, font_ids = [], [], []
    for c, character in enumerate(characters):
        drawn = 0
        for f, font in enumerate(fonts):
            if not covered[f, c]:
                continue
            glyph = draw_glyph(font, character, canvas)
            bbox = glyph.getbbox()
            if bbox is None:  # Mapped to an empty glyph: nothing to learn from.
                continue
            for angle, scale, dx, dy in poses[c, f]:
                data = glyph_transform(bbox, big, angle, scale, (dx, dy))
                out = glyph.transform((big, big), Image.AFFINE, data, resample=Image.BILINEAR)
                images.append(np.asarray(out.resize((image_size, image_size), Image.BOX)))
            labels.extend([c] * copies)
            font_ids.extend([f] * copies)
            drawn += 1
        if drawn == 0:
            raise ValueError(
                f"No font draws {character!r} (U+{ord(character):04X}). "
                f"Received: font_paths={list(font_paths)}"
            )
    return {
        "images": np.stack(images).astype(np.uint8),
        "labels": np.asarray(labels, np.int64),
        "font_ids": np.asarray(font_ids, np.int64),
    }
