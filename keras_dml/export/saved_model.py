"""Export to a TensorFlow SavedModel that serves `images -> embedding`."""

import os

from keras_dml.export.backend_support import check_saved_model_backend
from keras_dml.export.float32_model import float32_inference_model, source_difference
from keras_dml.export.output_path import check_output_path
from keras_dml.export.report import ExportReport, check_parity
from keras_dml.export.signature import (
    INPUT_NAME,
    OUTPUT_NAME,
    captured_variables,
    check_exportable,
    check_input_dtype,
    excluded_weights,
    keras_embeddings,
    resolve_image_shape,
    sample_images,
    serving_function,
)

ENDPOINT_NAMES = {"float32": "serve", "uint8": "serve_uint8"}


def export_saved_model(
    model,
    path,
    input_dtype="float32",
    image_size=None,
    verify=True,
    atol=1e-5,
    num_check_images=4,
):
    """Exports an embedding model as a TensorFlow SavedModel for serving.

    Args:
        model: `keras.Model`. A built keras_dml model whose `call(images)` returns `[N, D]`.
        path: str or path-like. Folder to write (must not hold another SavedModel).
        input_dtype: str. `"float32"`, `"uint8"` or `"both"`. Defaults to `"float32"`.
        image_size: int or `(height, width)`. Only for a model that accepts any size. Defaults to
            `None`.
        verify: bool. Reload and compare with Keras on random images. Defaults to `True`.
        atol: float. Parity tolerance (max absolute difference). Defaults to `1e-5`.
        num_check_images: int. Images used by the parity check. Defaults to `4`.

    Returns:
        `ExportReport`.

    Raises:
        ExportError: the model is not built, its input size is unknown, `input_dtype` is bad,
            or the backend is not TensorFlow.
        ExportParityError: `verify=True` and the reloaded SavedModel differs from Keras.
        OSError: `path` cannot be written, raised before any work on the model.
        FileExistsError: `path` already holds a SavedModel.

    Examples:
    >>> import keras_dml, tensorflow as tf
    >>> backbone = keras_dml.backbones.get("convnet", input_shape=(32, 32, 3))
    >>> model = keras_dml.models.EmbeddingModel(backbone, embedding_dim=64)
    >>> report = keras_dml.export.export_saved_model(model, "/tmp/emb_sm", input_dtype="both")
    >>> serve = tf.saved_model.load("/tmp/emb_sm").signatures["serve_uint8"]
    """
    check_output_path(path, "directory")  # before any work on the model
    check_saved_model_backend()  # before TensorFlow is imported
    import tensorflow as tf
    from keras.export import ExportArchive

    check_exportable(model)
    dtypes = check_input_dtype(input_dtype, allowed=("float32", "uint8", "both"))
    image_shape = resolve_image_shape(model, image_size)
    path = os.fspath(path)
    if os.path.exists(os.path.join(path, "saved_model.pb")):
        raise FileExistsError(
            f"{path} already holds a SavedModel. Remove it or choose another output path."
        )

    source, (model, policy) = model, float32_inference_model(model)
    archive = ExportArchive()
    functions = {}
    for dtype in dtypes:
        functions[dtype] = serving_function(model, image_shape, dtype)
        # Each endpoint is also a signature of that name; the first one is `serving_default`.
        archive.add_endpoint(ENDPOINT_NAMES[dtype], functions[dtype])
    variables = captured_variables(functions.values())
    # Inference variables only (not `archive.track(model)`, which would add every weight).
    archive.add_variable_collection("variables", variables)
    archive.write_out(path, verbose=False)

    report = ExportReport(
        path=path,
        format="saved_model",
        input_name=INPUT_NAME,
        output_name=OUTPUT_NAME,
        input_dtypes=dtypes,
        image_shape=list(image_shape),
        embedding_dim=int(_output_dim(functions[dtypes[0]])),
        learner_dims=_learner_dims(model),
        num_variables=len(variables),
        num_model_weights=len(model.weights),
        excluded_weights=list(excluded_weights(model, variables)),
        source_dtype_policy=policy,
    )
    if verify:
        loaded = tf.saved_model.load(path)
        for index, dtype in enumerate(dtypes):
            name = ENDPOINT_NAMES[dtype]
            images = sample_images(image_shape, num_check_images, dtype, seed=index)
            actual = loaded.signatures[name](**{INPUT_NAME: tf.constant(images)})[OUTPUT_NAME]
            report.max_abs_diff[dtype] = check_parity(
                actual.numpy(),
                keras_embeddings(model, images),
                atol,
                f"SavedModel {path} signature '{name}' ({dtype} input)",
            )
            if policy is not None:
                report.max_abs_diff_source[dtype] = source_difference(
                    actual.numpy(), source, images
                )
    return report


def _output_dim(function):
    concrete = function.get_concrete_function()
    return concrete.structured_outputs[OUTPUT_NAME].shape[-1]


def _learner_dims(model):
    dims = getattr(model, "learner_dims", None)
    return None if dims is None else [int(d) for d in dims]
