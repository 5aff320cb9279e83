"""What every export takes and returns, and the checks run before any conversion (no TensorFlow)."""

import keras
import numpy as np

INPUT_NAME = "images"
OUTPUT_NAME = "embedding"
INPUT_DTYPES = ("float32", "uint8")


class ExportError(ValueError):
    """The model cannot be exported as asked (not built, unknown input size, bad output...)."""


def check_exportable(model):
    """Raises `ExportError` unless `model` is a built `keras.Model`."""
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

    Args:
        model: `keras.Model`. A built model.
        image_size: int or `(height, width)`. Fills in a size the model leaves open. Defaults to
            `None`.

    Raises:
        ExportError: the size is unknown or contradicts the model.
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
    """The list of dtypes `input_dtype` (one of `allowed`, or `"both"`) stands for."""
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
