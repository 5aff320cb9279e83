"""The serving signature shared by every export format: `images` in, `embedding` out.

Every exported graph takes raw pixels `[N, H, W, C]` (dynamic batch, fixed spatial size = the
model's input size) as `uint8` or `float32`, casts them to float32, runs the model's own `call`
(which starts with the backbone's `ImageNormalization`, so no preprocessing is needed outside)
and returns `{"embedding": [N, D]}`. It follows the input contract (`keras_dml.serving`): another
shape is refused at run time, and an image with a NaN / Inf pixel gets a NaN embedding row.
Only variables that `call(images, training=False)` reads are captured, so training-only parts
(BIER regressors, DCML compositors, gradient-reversal branches) never reach the exported artifact.
"""

import keras
import numpy as np
import tensorflow as tf

from keras_dml.serving.input_contract import nan_rows_for_nonfinite_images

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


def input_spec(image_shape, dtype):
    """The `tf.TensorSpec` of the exported `images` input: dynamic batch, fixed H, W, C."""
    return tf.TensorSpec((None, *image_shape), tf.as_dtype(dtype), name=INPUT_NAME)


def serving_function(model, image_shape, dtype="float32"):
    """Builds and traces the inference function exported for one input dtype.

    Args:
        model: `keras.Model`. A built embedding model.
        image_shape: tuple `(H, W, C)`.
        dtype: str. `"float32"` or `"uint8"`. Defaults to `"float32"`.

    Returns:
        A traced `tf.function` mapping `images` to `{"embedding": [N, D] float32}`.

    Raises:
        ExportError: if the model does not return one `[N, D]` tensor.
    """
    spec = input_spec(image_shape, dtype)

    # `autograph=False` as in Keras's own export endpoints: `call` is traced as written.
    @tf.function(input_signature=[spec], autograph=False)
    def serve(images):
        images = tf.cast(checked_images(images, image_shape), tf.float32)
        embedding = model(images, training=False)
        if isinstance(embedding, (list, tuple, dict)) or len(embedding.shape) != 2:
            raise ExportError(
                f"Model '{model.name}' must return ONE embedding tensor [N, D] from "
                "`call(images)` (the keras_dml model contract); training-only outputs belong "
                f"in `train_step`/`compute_loss`. Received: {embedding!r}"
            )
        # The input contract (keras_dml.serving): a NaN row for an image with a NaN / Inf pixel,
        # for any model (keras-dml models already do it in `call`; twice changes nothing).
        embedding = nan_rows_for_nonfinite_images(images, tf.cast(embedding, tf.float32))
        return {OUTPUT_NAME: embedding}

    serve.get_concrete_function()
    return serve


def checked_images(images, image_shape):
    """`images`, after a run-time check that it is `[N, H, W, C]` with the exported H, W, C.

    A SavedModel signature called with a tensor of another shape runs the graph anyway (convolutions
    accept any size), returning embeddings of images the model was never meant to see, or fails
    deep inside with an error naming a convolution node (an empty batch too). The check fails
    first, naming the expected shape and the received one.

    Args:
        images: tensor fed to the serving function.
        image_shape: tuple `(H, W, C)` of the export.

    Returns:
        `images`, with the check as a control dependency.
    """
    expected = tf.constant(image_shape, tf.int32)
    shape = tf.shape(images)
    padded = tf.concat([shape, tf.fill([4], -1)], axis=0)
    valid = tf.reduce_all(
        tf.stack(
            [
                tf.equal(tf.size(shape), 4),
                tf.reduce_all(tf.equal(padded[1:4], expected)),
                tf.greater(padded[0], 0),
            ]
        )
    )
    height, width, channels = image_shape
    check = tf.debugging.Assert(
        valid,
        [
            f"keras_dml export: `images` must have shape [N, {height}, {width}, {channels}] "
            "with N >= 1 (raw pixels in [0, 255], the size the model was exported at; resize "
            "before serving). Received shape:",
            shape,
        ],
        summarize=8,
        name="check_image_shape",
    )
    with tf.control_dependencies([check]):
        return tf.identity(images)


def captured_variables(functions):
    """Variables read by traced `tf.function`s, in first-use order, without duplicates."""
    seen, variables = set(), []
    for function in functions:
        for concrete in function._list_all_concrete_functions() or [
            function.get_concrete_function()
        ]:
            for variable in concrete.variables:
                if id(variable) not in seen:
                    seen.add(id(variable))
                    variables.append(variable)
    return variables


def excluded_weights(model, variables):
    """Paths of the model weights the exported graph does not read (training-only parts)."""
    used = {_handle_key(v) for v in variables}
    return tuple(w.path for w in model.weights if _handle_key(w) not in used)


def _handle_key(variable):
    # Keras variables wrap a `tf.Variable` (`.value`); traced functions capture the latter.
    if isinstance(variable, keras.Variable):
        variable = variable.value
    return id(variable)


def sample_images(image_shape, n=4, dtype="float32", seed=0):
    """Random raw-pixel images `[n, H, W, C]` in [0, 255] for parity checks."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, size=(n, *image_shape))
    return pixels.astype(dtype)


def keras_embeddings(model, images):
    """The Keras model's embeddings of `images` (cast to float32) as a numpy array."""
    outputs = model(tf.constant(np.asarray(images, dtype="float32")), training=False)
    return np.asarray(keras.ops.convert_to_numpy(outputs), dtype="float32")
