"""The image files of a pipeline: a folder tree or a glob, each file's id and label, decoding."""

import io
import os

from PIL import Image, UnidentifiedImageError

from keras_dml.data.file_report import report_ignored, report_unreadable
from keras_dml.pipelines.beam_api import DoFn, Metrics
from keras_dml.pipelines.progress import NAMESPACE, NON_IMAGE_NAMES, counter
from keras_dml.search.gallery import IMAGE_SUFFIXES
from keras_dml.serving.input_contract import ImageContract, decode_image

GLOB_CHARACTERS = "*?["
# What a bad file raises: unreadable or not an image (OSError), broken pixels (ValueError: the
# input contract), or too many pixels.
BAD_FILE_ERRORS = (OSError, ValueError, Image.DecompressionBombError)


def file_pattern(images):
    """`(pattern, root)`: a folder's recursive pattern and the folder, or a glob and `None`.

    Examples:
    >>> file_pattern("photos/")
    ('photos/**', 'photos')
    >>> file_pattern("photos/*/*.jpg")
    ('photos/*/*.jpg', None)
    """
    images = os.fspath(images)
    if any(character in images for character in GLOB_CHARACTERS):
        return images, None
    root = images.rstrip("/") or "/"
    return f"{root}/**", root


def is_image(path):
    """Whether `path` has an image suffix (the suffixes `EmbeddingIndex` reads from a folder)."""
    return os.path.splitext(path)[1].lower() in IMAGE_SUFFIXES


class ImageFilesOnly(DoFn):
    """Paths -> the image paths; any other file is counted (`non_image_files`) and named."""

    def setup(self):
        self.others = counter("non_image_files")
        self.other_names = Metrics.string_set(NAMESPACE, NON_IMAGE_NAMES)

    def process(self, path):
        if is_image(path):
            yield path
        else:
            self.others.inc()
            self.other_names.add(path)


def report_files(counts, where, strict_files=False):
    """Names the run's ignored non-image files and skipped bad files (a warning), or raises.

    `counts` is `embed_images`'s summary; `strict_files` makes a bad file an error.

    Raises:
        UnreadableFilesError: a file could not be read and `strict_files` is true.
    """
    others = counts.get(NON_IMAGE_NAMES, [])
    report_ignored(where, others, f"not {' '.join(IMAGE_SUFFIXES)}")
    skipped = [(name, None) for name in counts["bad_file_names"]]  # already "path (reason)"
    report_unreadable(where, skipped, counts["files"], strict_files)


def file_record(path, root):
    """`(id, path, label)` of an image file: its path is its id; its class folder its label.

    Under a folder `root`, the label is the first folder below it (`""` for a file directly in
    it); for a glob it is the file's parent folder.

    Examples:
    >>> file_record("photos/cat/1.png", "photos")
    ('photos/cat/1.png', 'photos/cat/1.png', 'cat')
    >>> file_record("gs://bucket/dog/2.png", None)
    ('gs://bucket/dog/2.png', 'gs://bucket/dog/2.png', 'dog')
    """
    if root is not None:
        parts = path[len(root) :].strip("/").split("/")
        label = parts[0] if len(parts) > 1 else ""
    else:
        label = path.rstrip("/").split("/")[-2] if "/" in path else ""
    return path, path, label


def decode_file(data, image_shape):
    """The pixels `[H, W, C]` of an image file's bytes at the model's size, contract checked.

    Raises:
        One of `BAD_FILE_ERRORS` for a file that is not an image the model can embed.
    """
    try:
        image = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        raise OSError("not an image file PIL can read") from None
    with image:
        pixels = decode_image(image, image_shape[:2])
    return ImageContract(image_shape).check(pixels[None])[0]
