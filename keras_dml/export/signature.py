"""The TensorFlow serving function of the SavedModel and tf2onnx exports: `images -> embedding`."""

import keras

# The names and checks shared with the other export paths live in `contract` (no TensorFlow);
# they stay importable from here.
from keras_dml.export.contract import (
    INPUT_DTYPES,
    INPUT_NAME,
    OUTPUT_NAME,
    ExportError,
    check_exportable,
    check_input_dtype,
    keras_embeddings,
    resolve_image_shape,
    sample_images,
)
from keras_dml.serving.input_contract import nan_rows_for_invalid_images

__all__ = [
    "INPUT_DTYPES",
    "INPUT_NAME",
    "OUTPUT_NAME",
    "ExportError",
    "captured_variables",
    "check_exportable",
    "check_input_dtype",
    "checked_images",
    "excluded_weights",
    "input_spec",
    "keras_embeddings",
    "resolve_image_shape",
    "sample_images",
    "serving_function",
]


def input_spec(image_shape, dtype):
    """The `tf.TensorSpec` of the exported `images` input: dynamic batch, fixed H, W, C."""
    import tensorflow as tf

    return tf.TensorSpec((None, *image_shape), tf.as_dtype(dtype), name=INPUT_NAME)


def serving_function(model, image_shape, dtype="float32", empty_batches=True):
    """Traced `tf.function` for one input dtype: `images` -> `{"embedding": [N, D] float32}`.

    Args:
        model: `keras.Model`. Returns `[N, D]` from `call(images)`.
        image_shape: `(H, W, C)` of the input.
        dtype: str. `"float32"` or `"uint8"`. Defaults to `"float32"`.
        empty_batches: bool. Serve an empty batch as `[0, D]` in the graph (ONNX runtimes do it
            themselves). Defaults to `True`.

    Raises:
        ExportError: the model does not return one `[N, D]` tensor.
    """
    import tensorflow as tf

    spec = input_spec(image_shape, dtype)

    # `autograph=False` as in Keras's own export endpoints: `call` is traced as written.
    @tf.function(input_signature=[spec], autograph=False)
    def serve(images):
        images = tf.cast(checked_images(images, image_shape), tf.float32)
        count = tf.shape(images)[0]
        batch = images
        if empty_batches:
            # TensorFlow's convolutions fail on an empty batch: one blank image stands in.
            batch = tf.cond(count > 0, lambda: images, lambda: tf.zeros((1, *image_shape)))
        embedding = model(batch, training=False)
        if isinstance(embedding, (list, tuple, dict)) or len(embedding.shape) != 2:
            raise ExportError(
                f"Model '{model.name}' must return ONE embedding tensor [N, D] from "
                "`call(images)` (the keras_dml model contract); training-only outputs belong "
                f"in `train_step`/`compute_loss`. Received: {embedding!r}"
            )
        embedding = embedding[:count]  # the stand-in image's row goes
        # The input contract (keras_dml.serving): a NaN row for an image with a NaN, Inf or
        # out-of-range pixel, for any model (keras-dml models do it in `call` already).
        embedding = nan_rows_for_invalid_images(images, tf.cast(embedding, tf.float32))
        return {OUTPUT_NAME: embedding}

    serve.get_concrete_function()
    return serve


def checked_images(images, image_shape):
    """`images`, checked at run time to be `[N, H, W, C]` with the exported `image_shape`."""
    import tensorflow as tf

    expected = tf.constant(image_shape, tf.int32)
    shape = tf.shape(images)
    padded = tf.concat([shape, tf.fill([4], -1)], axis=0)
    valid = tf.logical_and(
        tf.equal(tf.size(shape), 4), tf.reduce_all(tf.equal(padded[1:4], expected))
    )
    height, width, channels = image_shape
    check = tf.debugging.Assert(
        valid,
        [
            f"keras_dml export: `images` must have shape [N, {height}, {width}, {channels}] "
            "(raw pixels in [0, 255], the size the model was exported at; resize before "
            "serving). Received shape:",
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
