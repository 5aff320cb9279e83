"""Exported artifacts refuse inputs they would embed wrongly.

A SavedModel signature used to run 64x64 or 6-channel images through the graph (convolutions take
any size) and return embeddings of images the model never saw; rank errors surfaced as graph
errors naming a convolution node. Every entry point now names the expected shape, and an empty
batch gets an empty `[0, D]` result (it used to be refused or to crash).
"""

import numpy as np
import pytest
import tensorflow as tf

from keras_dml.export import export_onnx, export_saved_model
from keras_dml.models import EmbeddingModel
from tests.export.test_onnx_client import load_client
from tests.export.test_parity import tiny_backbone

BAD_SHAPES = [(2, 64, 64, 3), (2, 16, 16, 3), (2, 32, 32, 6), (32, 32, 3), (0, 32, 32, 6)]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("checks")
    model = EmbeddingModel(tiny_backbone(), embedding_dim=8)
    export_saved_model(model, str(root / "saved_model"), input_dtype="both")
    export_onnx(model, str(root / "model.onnx"))
    return root


@pytest.mark.parametrize("signature", ["serving_default", "serve", "serve_uint8"])
@pytest.mark.parametrize("shape", BAD_SHAPES)
def test_saved_model_signatures_reject_wrong_shapes(exported, signature, shape):
    function = tf.saved_model.load(str(exported / "saved_model")).signatures[signature]
    dtype = tf.uint8 if signature == "serve_uint8" else tf.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"must have shape \[N, 32, 32, 3\]"):
        function(images=tf.zeros(shape, dtype))


def test_saved_model_signature_accepts_the_exported_shape_and_rejects_other_dtypes(exported):
    loaded = tf.saved_model.load(str(exported / "saved_model"))
    signature = loaded.signatures["serving_default"]
    assert signature(images=tf.zeros((2, 32, 32, 3)))["embedding"].shape == (2, 8)
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a float tensor"):
        signature(images=tf.zeros((2, 32, 32, 3), tf.float64))


@pytest.mark.parametrize("shape", BAD_SHAPES)
def test_saved_model_endpoints_reject_wrong_shapes(exported, shape):
    loaded = tf.saved_model.load(str(exported / "saved_model"))
    # TensorFlow's own input-spec check (wrong H, W, C or rank): it names the expected shape.
    expected = r"TensorSpec\(shape=\(None, 32, 32, 3\)|must have shape \[N, 32, 32, 3\]"
    with pytest.raises((TypeError, ValueError, tf.errors.InvalidArgumentError), match=expected):
        loaded.serve(tf.zeros(shape, tf.float32))


@pytest.mark.parametrize(
    "shape, dtype, message",
    [
        ((2, 64, 64, 3), "float32", "invalid dimensions"),
        ((2, 32, 32, 6), "float32", "invalid dimensions"),
        ((32, 32, 3), "float32", "Invalid rank"),
        ((2, 32, 32, 3), "float64", "Unexpected input data type"),
    ],
)
def test_onnx_session_rejects_wrong_inputs(exported, shape, dtype, message):
    import onnxruntime

    session = onnxruntime.InferenceSession(str(exported / "model.onnx"))
    with pytest.raises(Exception, match=message):
        session.run(None, {"images": np.zeros(shape, dtype)})


@pytest.mark.parametrize("signature", ["serving_default", "serve", "serve_uint8"])
def test_saved_model_signatures_embed_an_empty_batch_as_zero_rows(exported, signature):
    function = tf.saved_model.load(str(exported / "saved_model")).signatures[signature]
    dtype = tf.uint8 if signature == "serve_uint8" else tf.float32
    embedding = function(images=tf.zeros((0, 32, 32, 3), dtype))["embedding"]
    assert embedding.shape == (0, 8) and embedding.dtype == tf.float32


def test_onnx_client_rejects_nan_images(exported):
    client_module = load_client()
    client = client_module.EmbeddingClient(str(exported / "model.onnx"))
    with pytest.raises(client_module.ClientError, match="NaN or infinite"):
        client.embed(np.full((1, 32, 32, 3), np.nan, np.float32))
    assert client.embed(np.full((1, 32, 32, 3), 128.0, np.float32)).shape == (1, 8)


@pytest.mark.parametrize("images", [np.zeros((0, 32, 32, 3), np.float32), []])
def test_onnx_client_embeds_an_empty_batch_as_zero_rows(exported, images):
    client = load_client().EmbeddingClient(str(exported / "model.onnx"))
    embeddings = client.embed(images)
    assert embeddings.shape == (0, 8) and embeddings.dtype == np.float32
