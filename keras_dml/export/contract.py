"""What every export takes and returns, and the checks run before any conversion (no TensorFlow).

Every exported graph (SavedModel signature, ONNX from TensorFlow or PyTorch) takes `images`, raw
pixels `[N, H, W, C]` in [0, 255] as `uint8` or `float32` with a dynamic batch and the model's
fixed `H, W, C`, and returns `embedding` `[N, D]` float32 (the input contract of
`keras_dml.serving`). This module holds those names, the checks of the model and of the export
arguments, and the parity helpers; `keras_dml.export.signature` builds the TensorFlow serving
function on top of it, `keras_dml.export.onnx_torch` the PyTorch one.
"""

import keras
import numpy as np

INPUT_NAME = "images"
OUTPUT_NAME = "embedding"
INPUT_DTYPES = ("float32", "uint8")


class ExportError(ValueError):
    """The model cannot be exported as asked (not built, unknown input size, bad output...)."""


def check_exportable(model):
    """Checks that `model` is a built Keras model with one `[N, D]` output.

    Args:
        model: `keras.Model`. A keras_dml embedding model (or any single-input Keras model).

    Raises:
        ExportError: if the model is not a `keras.Model` or was never built.
    """
    if not isinstance(model, keras.Model):
        raise ExportError(
            "Export needs a `keras.Model` (e.g. `keras_dml.models.EmbeddingModel` or a model "
            f"loaded with `keras.saving.load_model`). Received: model={model!r}"
        )
    if not model.built:
        raise ExportError(
            f"Model '{model.name}' was never built, so its weights do not exist yet. Build it "
            "first: call it once on a batch of images (`model(images)`) or call "
            "`model.build((None, H, W, 3))`, then export."
        )


def resolve_image_shape(model, image_size=None):
    """Returns the `(H, W, C)` input shape the exported graph will accept.

    The spatial size is taken from the model (`model.image_shape` for keras_dml models, else the
    shape of its first input, else the shape it was built on); `image_size` fills it in when
    the model accepts any size and must agree with it otherwise.

    Args:
        model: `keras.Model`. A built model.
        image_size: int or `(height, width)`. Spatial size of the exported input. Defaults to
            `None` (use the model's own input size).

    Returns:
        tuple `(height, width, channels)` of ints.

    Raises:
        ExportError: if the size is unknown or contradicts the model.

    Examples:
    >>> resolve_image_shape(model)  # doctest: +SKIP
    (32, 32, 3)
    """
    shape = getattr(model, "image_shape", None)
    if shape is None:
        shape = _declared_input_shape(model)
    if shape is None or len(shape) != 3:
        raise ExportError(
            f"Cannot tell the input shape of model '{model.name}'. Export expects an image "
            "model taking `[N, H, W, C]` raw pixels; keras_dml models expose `image_shape`, "
            f"functional models their `inputs`. Received input shape: {shape}"
        )
    height, width, channels = shape
    if image_size is not None:
        size = (image_size, image_size) if np.isscalar(image_size) else tuple(image_size)
        if len(size) != 2 or min(int(s) for s in size) < 1:
            raise ExportError(
                "`image_size` must be an int or a (height, width) pair of positive ints. "
                f"Received: image_size={image_size!r}"
            )
        for name, declared, requested in (("height", height, size[0]), ("width", width, size[1])):
            if declared is not None and int(declared) != int(requested):
                raise ExportError(
                    f"`image_size` {tuple(size)} contradicts the model's input {name} "
                    f"{declared} (model input shape {tuple(shape)}). Drop `image_size` or "
                    "rebuild the model at the size you want to serve."
                )
        height, width = int(size[0]), int(size[1])
    if height is None or width is None or channels is None:
        raise ExportError(
            f"Model '{model.name}' accepts images of any size ({tuple(shape)}); exported graphs "
            "have a fixed spatial size. Pass `image_size=(height, width)` (CLI: --image-size)."
        )
    return int(height), int(width), int(channels)


def _declared_input_shape(model):
    """`(H, W, C)` from a functional model's input or the shape a subclassed model was built on."""
    try:
        return tuple(model.inputs[0].shape[1:])
    except (AttributeError, IndexError, TypeError, ValueError):
        pass
    build_config = model.get_build_config() or {}
    shape = build_config.get("input_shape")
    if shape is not None and len(shape) == 4 and not isinstance(shape[0], (list, tuple)):
        return tuple(shape[1:])
    return None


def check_input_dtype(input_dtype, allowed=INPUT_DTYPES):
    """Returns the list of input dtypes that `input_dtype` stands for.

    Args:
        input_dtype: str. One of `allowed`, or `"both"` when `"both"` is allowed.
        allowed: tuple of str. Accepted values. Defaults to `("float32", "uint8")`.

    Returns:
        list of str, e.g. `["float32", "uint8"]` for `"both"`.
    """
    if input_dtype == "both" and "both" in allowed:
        return ["float32", "uint8"]
    if input_dtype not in allowed or input_dtype == "both":
        raise ExportError(f"`input_dtype` must be one of {allowed}. Received: {input_dtype!r}")
    return [input_dtype]


def sample_images(image_shape, n=4, dtype="float32", seed=0):
    """Random raw-pixel images `[n, H, W, C]` in [0, 255] for parity checks."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(n, *image_shape))
    return pixels.astype(dtype)


def keras_embeddings(model, images):
    """The Keras model's embeddings of `images` (cast to float32) as a numpy array."""
    images = keras.ops.convert_to_tensor(np.asarray(images, dtype="float32"))
    outputs = model(images, training=False)
    return np.asarray(keras.ops.convert_to_numpy(outputs), dtype="float32")
