"""Gallery inputs: arrays of embeddings or images, an `ImageDataset`, a folder of image files."""

import os
from pathlib import Path

import numpy as np

from keras_dml.data.batch_streams import is_batch_stream
from keras_dml.serving.embed import embed
from keras_dml.serving.input_contract import ImageContract, decode_image

# The same list as deployment/onnx_client.py's (a test holds them equal): TIFF galleries, float ones
# included, are read and checked by the input contract, not skipped.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff")


def list_image_folder(folder):
    """`(paths, labels, class_names)` of the images under `folder` (labels from `<class>/`)."""
    root = Path(folder)
    if not root.is_dir():
        raise FileNotFoundError(
            f"The gallery folder does not exist. Received: {os.fspath(folder)!r}"
        )
    paths = sorted(p for p in root.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise ValueError(
            f"No images ({', '.join(IMAGE_SUFFIXES)}) under {os.fspath(folder)!r}; put image "
            "files in it (optionally in one sub-folder per class)."
        )
    classes = sorted(
        {p.relative_to(root).parts[0] for p in paths if len(p.relative_to(root).parts) > 1}
    )
    if not classes or any(len(p.relative_to(root).parts) == 1 for p in paths):
        return [str(p) for p in paths], None, None
    lookup = {name: i for i, name in enumerate(classes)}
    labels = np.array([lookup[p.relative_to(root).parts[0]] for p in paths], np.int64)
    return [str(p) for p in paths], labels, classes


def read_images(paths, image_size):
    """Reads image files (serving input contract) as float32 RGB `[N, H, W, 3]` at `image_size`."""
    from PIL import Image

    images = []
    for path in paths:
        try:
            with Image.open(path) as image:
                images.append(decode_image(image, image_size).astype(np.float32))
        except OSError as error:
            raise ValueError(f"Cannot read the image {path}: {error}. Remove or fix it.") from error
    if image_size is None and len({image.shape for image in images}) > 1:
        raise ValueError(
            "The images have different sizes and the model has no fixed input size; resize them "
            "first or use a model built with a fixed `input_shape`."
        )
    return np.stack(images)


def embed_images(embedder, images, batch_size=64):
    """Embeds an array of images `[N, H, W, 3]` in batches -> float32 `[N, D]`."""
    contract = ImageContract(embedder.image_shape)
    if len(images) == 0:
        contract.check(images)  # refuses the empty batch with the contract's message
    parts = [
        embedder(images[s : s + batch_size], contract) for s in range(0, len(images), batch_size)
    ]
    return np.concatenate(parts).astype(np.float32, copy=False)


def embed_paths(embedder, paths, batch_size=64):
    """Embeds image files in batches (decoded batch by batch) -> float32 `[N, D]`."""
    contract = ImageContract(embedder.image_shape)
    parts = []
    for start in range(0, len(paths), batch_size):
        images = read_images(paths[start : start + batch_size], embedder.image_size)
        parts.append(embedder(images, contract))
    return np.concatenate(parts).astype(np.float32, copy=False)


def resolve_gallery(data, embedder, batch_size=64):
    """Turns a gallery or query input into `(embeddings, labels, ids, class_names)`.

    `data` is embeddings `[N, D]`, raw pixels `[N, H, W, C]`, an `ImageDataset`, a batched
    dataset of `(images, labels)`, a folder, an image file or a list of files; all but embeddings
    need `embedder`. Missing parts are `None`.
    """
    if isinstance(data, (str, os.PathLike)) or (
        isinstance(data, (list, tuple)) and data and isinstance(data[0], (str, os.PathLike))
    ):
        _need_model(embedder, "image files")
        if isinstance(data, (list, tuple)):
            paths, labels, classes = [os.fspath(p) for p in data], None, None
        elif os.path.isfile(data):
            paths, labels, classes = [os.fspath(data)], None, None
        else:
            paths, labels, classes = list_image_folder(data)
        return embed_paths(embedder, paths, batch_size), labels, paths, classes
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
