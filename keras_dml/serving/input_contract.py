"""The input contract of every serving path: which images a model embeds (only NumPy imported)."""

import warnings

import numpy as np

PIXEL_RANGE = (0.0, 255.0)
CHANNELS = 3
RESIZE_HINT = "resize arrays first, e.g. keras.ops.image.resize(images, (H, W))"


class InputContractError(ValueError):
    """Images that no keras-dml model embeds correctly (wrong shape, dtype, range, NaN / Inf)."""


def expected_shape(image_shape=None):
    """The expected batch shape as text, e.g. `[N, 32, 32, 3]` (`H`/`W` where not fixed)."""
    height, width, channels = image_shape or (None, None, CHANNELS)
    sizes = ("H" if height is None else height, "W" if width is None else width)
    return f"[N, {sizes[0]}, {sizes[1]}, {CHANNELS if channels is None else channels}]"


def looks_unit_scaled(high, dtype):
    """Whether a batch's maximum `high` suggests pixels scaled to [0, 1] (floats only)."""
    return np.issubdtype(np.dtype(dtype), np.floating) and 0.0 < high <= 1.0


def unit_scale_message(low, high):
    """The one-line warning for images that look scaled to [0, 1]."""
    return (
        f"Image values lie in [{low:g}, {high:g}]: the images look scaled to [0, 1], but "
        "keras-dml models expect raw pixels in [0, 255] (multiply by 255; the model normalises "
        "itself)."
    )


class ImageContract:
    """Checks host-side image batches against one model's input; warns at most once.

    Create one per call (`embed`, `search`, a client's batch loop): the [0, 1] warning shows once.

    Args:
        image_shape: `(H, W, C)` the model takes; `None` entries are not checked. Defaults to
            `None` (`C = 3`, any size).

    Examples:
    >>> contract = ImageContract((32, 32, 3))
    >>> contract.check(np.zeros((2, 32, 32, 3), np.uint8)).shape
    (2, 32, 32, 3)
    """

    def __init__(self, image_shape=None):
        shape = tuple(image_shape) if image_shape is not None else (None, None, CHANNELS)
        if len(shape) != 3:
            raise ValueError(f"`image_shape` must be (H, W, C). Received: image_shape={shape}")
        self.image_shape = tuple(None if d is None else int(d) for d in shape)
        self.warned = False

    def check(self, images):
        """Returns `images` as a NumPy array (uint8 / float32 kept, other reals cast to float32).

        An empty batch `[0, H, W, C]` passes: every path embeds it as an empty `[0, D]` result.

        Raises:
            InputContractError: wrong rank, channel count, size or dtype; pixels outside
                [0, 255]; NaN or Inf pixels.
        """
        images = np.asarray(images)
        dtype = images.dtype
        if dtype.kind == "b" or not (
            np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.integer)
        ):
            raise InputContractError(
                f"Images must be uint8 or float32 raw pixels in [0, 255]; got dtype {dtype}."
            )
        shape = expected_shape(self.image_shape)
        if images.ndim != 4 or images.shape[-1] != (self.image_shape[2] or CHANNELS):
            raise InputContractError(
                f"Images must be a batch {shape} of RGB pixels; got shape {images.shape}. "
                "Add the batch axis for one image; convert grayscale or RGBA to RGB."
            )
        height, width = self.image_shape[:2]
        if (height is not None and images.shape[1] != height) or (
            width is not None and images.shape[2] != width
        ):
            raise InputContractError(
                f"Images must be {shape} raw pixels (the model's input size); got shape "
                f"{images.shape}. Arrays are never resized: {RESIZE_HINT}."
            )
        if dtype == np.uint8:
            return images
        if images.shape[0] == 0:
            return images.astype(np.float32)
        low, high = float(images.min()), float(images.max())  # NaN and Inf propagate to these
        if not (np.isfinite(low) and np.isfinite(high)):
            finite = np.isfinite(images).reshape(images.shape[0], -1).all(axis=1)
            raise InputContractError(
                f"Image {int(np.argmin(finite))} of the batch has NaN or infinite pixels "
                f"({int(np.count_nonzero(~finite))} such images); pass raw pixels in [0, 255]."
            )
        if low < PIXEL_RANGE[0] or high > PIXEL_RANGE[1]:
            raise InputContractError(
                f"Images must be raw pixels in [0, 255]; got values in [{low:g}, {high:g}] "
                f"({dtype}). Undo any normalisation first (the model normalises itself)."
            )
        if looks_unit_scaled(high, dtype) and not self.warned:
            self.warned = True
            warnings.warn(unit_scale_message(low, high), UserWarning, stacklevel=3)
        return images if dtype == np.float32 else images.astype(np.float32)


NUMERIC_MODES = ("F", "I", "I;16", "I;16B", "I;16L", "I;16N")


def decode_image(image, image_size=None):
    """A `PIL.Image` as RGB `[H, W, 3]` at `image_size` (bilinear); float files stay float32."""
    from PIL import Image

    numeric = image.mode in NUMERIC_MODES
    image = image.convert("F") if numeric else image.convert("RGB")
    if image_size is not None and image.size != (image_size[1], image_size[0]):
        image = image.resize((image_size[1], image_size[0]), Image.Resampling.BILINEAR)
    if not numeric:
        return np.asarray(image, dtype=np.uint8)
    return np.repeat(np.asarray(image, dtype=np.float32)[..., None], CHANNELS, axis=-1)


def check_embeddings(embeddings, what="embeddings"):
    """Returns `embeddings` `[N, D]`; a one-line `InputContractError` (`what`) for a NaN row."""
    for start in range(0, len(embeddings), 65536):
        block = np.asarray(embeddings[start : start + 65536])
        finite = np.isfinite(block).reshape(block.shape[0], -1).all(axis=1)
        if not finite.all():
            raise InputContractError(
                f"Row {start + int(np.argmin(finite))} of the {what} is NaN or Inf: its input "
                "image had non-finite pixels (or the model diverged); fix that image."
            )
    return embeddings


def check_image_tensor(images, image_shape=None):
    """Returns the model input `images` after checking its static shape and dtype, when traced.

    Raises:
        InputContractError: a static shape or dtype that breaks the contract.
    """
    from keras import backend

    dtype = backend.standardize_dtype(images.dtype)
    if dtype == "bool" or dtype.startswith("complex") or dtype == "string":
        raise InputContractError(
            f"Images must be uint8 or float32 raw pixels in [0, 255]; got dtype {dtype}."
        )
    shape = tuple(images.shape)
    expected = tuple(image_shape) if image_shape is not None else (None, None, None)
    if len(shape) != 4 or any(
        e is not None and s is not None and int(s) != int(e) for s, e in zip(shape[1:], expected)
    ):
        raise InputContractError(
            f"Images must be a batch {expected_shape(image_shape)} of raw pixels (the model's "
            f"input size); got shape {shape}. Arrays are never resized: {RESIZE_HINT}."
        )
    if backend.backend() == "tensorflow" and None in (*shape[1:], *expected):
        return _tf_runtime_shape_check(images, expected)
    return images


def _tf_runtime_shape_check(images, expected):
    """The same check at run time, for TensorFlow graphs traced with unknown dimensions."""
    import tensorflow as tf

    if tf.executing_eagerly() or None in expected:
        return images
    shape = tf.shape(images)
    check = tf.debugging.Assert(
        tf.reduce_all(tf.equal(shape[1:], tf.constant(expected, tf.int32))),
        [
            f"Images must be a batch {expected_shape(expected)} of raw pixels (the model's input "
            f"size); {RESIZE_HINT}. Received shape:",
            shape,
        ],
        name="check_image_shape",
    )
    with tf.control_dependencies([check]):
        images = tf.identity(images)
    images.set_shape((None, *expected))  # the check guarantees it; later layers see it statically
    return images


def nan_rows_for_invalid_images(images, embeddings, pixel_range=True):
    """`embeddings` `[N, D]` with a NaN row for each image with a NaN or Inf pixel, in-graph.

    Args:
        images: tensor `[N, H, W, C]`. The model's input.
        embeddings: tensor `[N, D]`. The model's output.
        pixel_range: bool. Also a NaN row for a pixel outside [0, 255] (inference and exported
            graphs; not training, whose augmentation may leave the range). Defaults to `True`.
    """
    from keras import backend, ops

    dtype = backend.standardize_dtype(images.dtype)
    if dtype in ("uint8", "bool"):
        return embeddings  # uint8 is always in range; bool was refused before
    if pixel_range:
        valid = ops.logical_and(images >= PIXEL_RANGE[0], images <= PIXEL_RANGE[1])  # NaN: False
    elif dtype.startswith(("float", "bfloat")):
        # Needed: graph-mode max pooling turns NaN into the lowest float, a finite embedding.
        valid = ops.isfinite(images)
    else:
        return embeddings
    factor = ops.where(ops.all(valid, axis=(1, 2, 3)), 1.0, float("nan"))
    return embeddings * ops.cast(factor, embeddings.dtype)[:, None]
