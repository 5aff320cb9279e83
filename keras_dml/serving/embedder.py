"""`Embedder`: one callable from images to embeddings, for a Keras model, a SavedModel or ONNX."""

import os

import numpy as np

from keras_dml.serving.input_contract import ImageContract
from keras_dml.utils import MissingDependencyError, optional_import


def saved_model_needs_tensorflow(path):
    """The one-line error for a SavedModel folder given where TensorFlow is not installed."""
    return (
        f"{path} is a TensorFlow SavedModel, and loading it needs TensorFlow: pip install "
        '"keras-dml[tensorflow]", or pass the .keras model or its ONNX export '
        "(keras-dml export --format onnx)."
    )


def _slices_from_dims(dims):
    bounds, start = [], 0
    for dim in dims:
        bounds.append((start, start + int(dim)))
        start += int(dim)
    return bounds


class Embedder:
    """Images -> embeddings with a Keras model, a SavedModel folder or an ONNX file.

    Args:
        model: a `keras.Model`, an `*.onnx` path, or a SavedModel folder (load only your own:
            its graph's ops run).

    Attributes:
        image_size: `(height, width)` the model expects, or None when not fixed.
        image_shape: `(height, width, channels)` the model expects (`None` where not fixed).
        learner_slices: list of `(start, stop)` column ranges, one per learner, or None.
        description: str naming the model, stored in index metadata.

    Examples:
    >>> import keras
    >>> model = keras.Sequential([keras.Input((4, 4, 3)), keras.layers.Flatten()])
    >>> Embedder(model)(np.zeros((2, 4, 4, 3), "float32")).shape
    (2, 48)
    """

    def __init__(self, model):
        self.learner_slices = None
        self.image_size = None
        self.channels = None
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            self.description = path
            if path.endswith(".onnx"):
                self._load_onnx(path)
            elif os.path.isfile(os.path.join(path, "saved_model.pb")):
                self._load_saved_model(path)
            else:
                raise ValueError(
                    f"{path} is neither an ONNX file nor a SavedModel folder; for a .keras file "
                    f"or a zoo model, pass keras_dml.zoo.resolve_model({path!r})."
                )
        else:
            self.description = getattr(model, "name", type(model).__name__)
            self._use_keras(model)

    def _use_keras(self, model):
        if hasattr(model, "learner_slices"):
            self.learner_slices = [tuple(map(int, s)) for s in model.learner_slices()]
        shape = getattr(model, "image_shape", None)
        if shape is None:
            try:
                shape = model.input_shape[1:]
            except (AttributeError, ValueError):
                shape = None
        if shape and shape[0] and shape[1]:
            self.image_size = (int(shape[0]), int(shape[1]))
        if shape and len(shape) == 3 and shape[2]:
            self.channels = int(shape[2])
        predict = getattr(model, "predict_on_batch", None) or model
        self._run = lambda images: np.asarray(predict(images), dtype=np.float32)

    def _load_onnx(self, path):
        ort = optional_import("onnxruntime", feature="searching with an ONNX model")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"ONNX model not found. Received: model={path!r}")
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        inputs = session.get_inputs()
        if len(inputs) != 1 or len(session.get_outputs()) != 1:
            raise ValueError(
                f"{path} is not a keras-dml embedding model (one input `images`, one output "
                "`embedding`); export it with `keras-dml export --format onnx`."
            )
        name, shape = inputs[0].name, inputs[0].shape
        if len(shape) == 4 and all(isinstance(d, int) for d in shape[1:3]):
            self.image_size = (shape[1], shape[2])
        if len(shape) == 4 and isinstance(shape[3], int):
            self.channels = shape[3]
        dtype = np.uint8 if inputs[0].type == "tensor(uint8)" else np.float32
        meta = session.get_modelmeta().custom_metadata_map
        if meta.get("keras_dml.learner_dims"):
            dims = [int(d) for d in meta["keras_dml.learner_dims"].split(",")]
            self.learner_slices = _slices_from_dims(dims)

        def run(images):
            images = np.asarray(images)
            if dtype == np.uint8 and images.dtype != np.uint8:
                images = np.rint(images)  # the contract checked the range [0, 255]
            return session.run(None, {name: images.astype(dtype)})[0].astype(np.float32)

        self._run = run

    def _load_saved_model(self, path):
        try:
            import tensorflow as tf
        except ImportError as error:
            raise MissingDependencyError(saved_model_needs_tensorflow(path)) from error

        loaded = tf.saved_model.load(path)
        signatures = loaded.signatures
        name = "serve" if "serve" in signatures else "serving_default"
        function = signatures[name]
        spec = function.structured_input_signature[1]
        input_name, input_spec = next(iter(spec.items()))
        if input_spec.shape.rank == 4 and input_spec.shape[1] and input_spec.shape[2]:
            self.image_size = (int(input_spec.shape[1]), int(input_spec.shape[2]))
        if input_spec.shape.rank == 4 and input_spec.shape[3]:
            self.channels = int(input_spec.shape[3])

        def run(images):
            images = np.asarray(images)
            if input_spec.dtype == tf.uint8 and images.dtype != np.uint8:
                images = np.rint(images)  # the contract checked the range [0, 255]
            tensor = tf.constant(images, dtype=input_spec.dtype)
            outputs = function(**{input_name: tensor})
            return np.asarray(next(iter(outputs.values())), dtype=np.float32)

        self._run = run

    @property
    def image_shape(self):
        """`(height, width, channels)` the model takes (`None` where it is not fixed)."""
        height, width = self.image_size or (None, None)
        return (height, width, self.channels)

    def __call__(self, images, contract=None):
        """Embeds a batch of raw-pixel images `[B, H, W, C]` -> float32 `[B, D]`.

        Args:
            images: array `[B, H, W, C]` of raw pixels in [0, 255] at the model's size.
            contract: `ImageContract` shared by one call's batches, or None. Defaults to `None`.

        Raises:
            InputContractError: the batch breaks the input contract.
        """
        contract = contract or ImageContract(self.image_shape)
        output = self._run(contract.check(images))
        if output.ndim != 2:
            raise ValueError(
                "The model must return one tensor [batch, D] (the concatenated embedding). "
                f"Received output shape {output.shape}."
            )
        return output
