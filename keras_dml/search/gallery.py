"""Gallery inputs: arrays of embeddings or images, an `ImageDataset`, a folder of image files."""

import os
from pathlib import Path

import numpy as np

from keras_dml.data.batch_streams import is_batch_stream
from keras_dml.data.file_report import error_reason, report_ignored, report_unreadable
from keras_dml.serving.embed import embed
from keras_dml.serving.input_contract import ImageContract, decode_image

# The same list as deployment/onnx_client.py's (a test holds them equal): TIFF files, float ones
# included, are images too, each checked by the input contract.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")


def list_image_folder(folder):
    """`(paths, labels, class_names)` of the images under `folder` (labels from `<class>/`).

    Files without an image suffix are named in a warning.
    """
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(
            f"The gallery folder does not exist. Received: {os.fspath(folder)!r}"
        )
    files = sorted(p for p in root.rglob("*") if p.is_file())
    paths = [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]
    if not paths:
        raise ValueError(
            f"No images ({', '.join(IMAGE_SUFFIXES)}) under {os.fspath(folder)!r}; put image "
            "files in it (optionally in one sub-folder per class)."
        )
    others = [str(p) for p in files if p.suffix.lower() not in IMAGE_SUFFIXES]
    report_ignored(os.fspath(folder), others, f"not {' '.join(IMAGE_SUFFIXES)}")
    classes = sorted(
        {p.relative_to(root).parts[0] for p in paths if len(p.relative_to(root).parts) > 1}
    )
    if not classes or any(len(p.relative_to(root).parts) == 1 for p in paths):
        return [str(p) for p in paths], None, None
    lookup = {name: i for i, name in enumerate(classes)}
    labels = np.array([lookup[p.relative_to(root).parts[0]] for p in paths], np.int64)
    return [str(p) for p in paths], labels, classes


def bad_file_errors():
    """What reading a bad image file raises: unreadable (OSError), bad pixels, too many pixels."""
    from PIL import Image

    return (OSError, ValueError, Image.DecompressionBombError)


def read_image(path, image_size, contract=None):
    """One image file as float32 RGB `[H, W, 3]` at `image_size`, checked by `contract`."""
    from PIL import Image

    with Image.open(path) as image:
        pixels = decode_image(image, image_size).astype(np.float32)
    if contract is not None:
        contract.check(pixels[None])
    return pixels


def stack_images(images, image_size):
    """`np.stack(images)`, refusing images of several sizes for a model of any size."""
    if image_size is None and len({image.shape for image in images}) > 1:
        raise ValueError(
            "The images have different sizes and the model has no fixed input size; resize them "
            "first or use a model built with a fixed `input_shape`."
        )
    return np.stack(images)


def read_images(paths, image_size):
    """Reads image files (serving input contract) as float32 RGB `[N, H, W, 3]` at `image_size`."""
    images = []
    for path in paths:
        try:
            images.append(read_image(path, image_size))
        except OSError as error:
            raise ValueError(f"Cannot read the image {path}: {error}. Remove or fix it.") from error
    return stack_images(images, image_size)


def read_folder_images(paths, image_size, contract=None):
    """`(images, kept, skipped)`: the readable files' pixels, their positions, `(path, reason)`s."""
    images, kept, skipped = [], [], []
    for position, path in enumerate(paths):
        try:
            images.append(read_image(path, image_size, contract))
            kept.append(position)
        except bad_file_errors() as error:
            skipped.append((path, error_reason(error)))
    return images, kept, skipped


def readable_files(paths, image_size, where, strict_files=False):
    """The files of `paths` that read as images; the others are skipped and named (or fatal)."""
    _, kept, skipped = read_folder_images(paths, image_size)
    report_unreadable(where, skipped, len(paths), strict_files)
    return [paths[i] for i in kept]


def embed_images(embedder, images, batch_size=64):
    """Embeds an array of images `[N, H, W, 3]` in batches -> float32 `[N, D]`."""
    contract = ImageContract(embedder.image_shape)
    starts = range(0, max(len(images), 1), batch_size)  # an empty array: one `[0, D]` batch
    parts = [embedder(images[s : s + batch_size], contract) for s in starts]
    return np.concatenate(parts).astype(np.float32, copy=False)


def embed_paths(embedder, paths, batch_size=64):
    """Embeds image files in batches (decoded batch by batch) -> float32 `[N, D]`."""
    contract = ImageContract(embedder.image_shape)
    parts = []
    for start in range(0, len(paths), batch_size):
        images = read_images(paths[start : start + batch_size], embedder.image_size)
        parts.append(embedder(images, contract))
    return np.concatenate(parts).astype(np.float32, copy=False)


def embed_folder(embedder, paths, batch_size=64, where="", strict_files=False):
    """`(embeddings [N, D], kept)` of a folder's files; unreadable ones are skipped and named.

    Raises:
        UnreadableFilesError: a file cannot be read and `strict_files` is true.
    """
    contract = ImageContract(embedder.image_shape)
    parts, kept, skipped = [], [], []
    for start in range(0, len(paths), batch_size):
        batch = paths[start : start + batch_size]
        images, good, bad = read_folder_images(batch, embedder.image_size, contract)
        kept += [start + i for i in good]
        skipped += bad
        if bad and strict_files:  # stop at the first batch holding an unreadable file
            report_unreadable(where, skipped, len(paths), strict_files=True)
        if images:
            parts.append(embedder(stack_images(images, embedder.image_size), contract))
    report_unreadable(where, skipped, len(paths))
    if not parts:
        raise ValueError(f"{where}: none of the {len(paths)} image files can be read.")
    return np.concatenate(parts).astype(np.float32, copy=False), kept


def resolve_gallery(data, embedder, batch_size=64, strict_files=False):
    """Turns a gallery or query input into `(embeddings, labels, ids, class_names)`.

    `data` is embeddings `[N, D]`, raw pixels `[N, H, W, C]`, an `ImageDataset`, a batched
    dataset of `(images, labels)`, a folder, an image file or a list of files; all but embeddings
    need `embedder`. Missing parts are `None`. Unreadable files of a folder are skipped and named
    in a warning, or raise `UnreadableFilesError` with `strict_files`.
    """
    if isinstance(data, (str, os.PathLike)) or (
        isinstance(data, (list, tuple)) and data and isinstance(data[0], (str, os.PathLike))
    ):
        _need_model(embedder, "image files")
        if isinstance(data, (list, tuple)):
            paths = [os.fspath(p) for p in data]
        elif os.path.isfile(data):
            paths = [os.fspath(data)]
        else:
            paths, labels, classes = list_image_folder(data)
            where = f"folder {os.fspath(data)!r}"
            embeddings, kept = embed_folder(embedder, paths, batch_size, where, strict_files)
            labels = None if labels is None else labels[kept]
            return embeddings, labels, [paths[i] for i in kept], classes
        return embed_paths(embedder, paths, batch_size), None, paths, None
    if hasattr(data, "as_dataset") or hasattr(data, "as_tf_dataset"):
        _need_model(embedder, "an ImageDataset")
        embeddings, labels = embed(embedder, data, batch_size=batch_size, verbose=False)
        paths = None if getattr(data, "paths", None) is None else [str(p) for p in data.paths]
        return embeddings, labels, paths, list(getattr(data, "class_names", None) or []) or None
    if is_batch_stream(data):
        _need_model(embedder, "a dataset of images")
        embeddings, labels = embed(embedder, data, verbose=False)
        return embeddings, labels, None, None
    array = data if isinstance(data, np.memmap) else np.asarray(data)
    if array.ndim == 2:
        return array, None, None, None
    if array.ndim == 4:
        _need_model(embedder, "images")
        return embed_images(embedder, array, batch_size), None, None, None
    raise ValueError(
        "Pass embeddings [N, D], images [N, H, W, C], an ImageDataset, a batched dataset of "
        "images or a folder of images. "
        f"Received an array of shape {array.shape}."
    )


def _need_model(embedder, what):
    if embedder is None:
        raise ValueError(
            f"This index has no model, so it cannot embed {what}. Build it with "
            "`EmbeddingIndex.from_model(model)` or pass embeddings [N, D]."
        )
