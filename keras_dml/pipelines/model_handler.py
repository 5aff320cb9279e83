"""`EmbedderHandler`: `RunInference` handler for a keras-dml model (.keras, SavedModel, ONNX)."""

import os
import shutil
import tempfile

import numpy as np

from keras_dml.pipelines.beam_api import FileSystems, ModelHandler, PredictionResult
from keras_dml.serving.embedder import Embedder
from keras_dml.zoo.loading import resolve_model


def local_model(path):
    """`path`, or a local copy of a remote model file (`gs://`, `s3://`, ...) for the worker."""
    if "://" not in path or path.startswith(("hf://", "kaggle://")):  # The zoo fetches presets.
        return path
    local = os.path.join(tempfile.mkdtemp(prefix="keras_dml_model_"), path.rsplit("/", 1)[-1])
    with FileSystems.open(path) as source, open(local, "wb") as target:
        shutil.copyfileobj(source, target)
    return local


class EmbedderHandler(ModelHandler):
    """Embeds batches of decoded images with `Embedder` (ONNX: onnxruntime, no TensorFlow).

    Args:
        model: str. A `.keras` file, zoo name, SavedModel folder or `.onnx` file (remote
            `.keras` / `.onnx` files are copied to each worker).
        batch_size: int. Most images per model call. Defaults to `64`.
    """

    def __init__(self, model, batch_size=64):
        super().__init__(min_batch_size=int(batch_size), max_batch_size=int(batch_size))
        self.model = os.fspath(model)

    def load_model(self):
        return Embedder(resolve_model(local_model(self.model)))

    def run_inference(self, batch, model, inference_args=None):
        vectors = model(np.stack(batch))
        return [PredictionResult(None, vector) for vector in vectors]
