"""Exported SavedModel and ONNX graphs reproduce every model family within 1e-5.

`FAMILIES` lists one small builder per model family: the embedding variants below and every
registered training method (its `MethodSpec.tiny`), so a new method is covered without an edit.
Inputs are real images (sklearn digits, upscaled to 32 px RGB) at batch sizes 1 and 7.
"""

import functools
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_dml.export import export_onnx, export_saved_model
from keras_dml.methods import get_method, list_methods
from keras_dml.models import EmbeddingModel
from tests.support.configs import config_dict

IMAGE_SIZE = 32
ATOL = 1e-5


def tiny_backbone(seed=0):
    """Functional raw pixels -> 4-D feature map, BatchNorm statistics set to non-trivial values."""
    keras.utils.set_random_seed(seed)
    inputs = keras.Input((IMAGE_SIZE, IMAGE_SIZE, 3))
    x = keras.layers.Rescaling(1.0 / 127.5, offset=-1.0)(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same")(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    backbone = keras.Model(inputs, x, name="tiny_backbone")
    rng = np.random.default_rng(seed)
    for weight in backbone.non_trainable_weights:
        weight.assign(rng.uniform(0.5, 1.5, weight.shape).astype("float32"))
    return backbone


@keras.saving.register_keras_serializable(package="keras_dml_tests")
class EmbeddingWithRegressor(EmbeddingModel):
    """An `EmbeddingModel` with a training-only regressor (as in A-BIER) that `call` never reads."""

    def build(self, input_shape):
        # `EmbeddingModel.__init__` builds the model, so the extra part is created here.
        self.regressor = keras.layers.Dense(self.learner_dims[0], name="regressor")
        self.regressor.build((None, self.learner_dims[-1]))
        super().build(input_shape)


def embedding_with_loss_layer():
    """An `EmbeddingModel` that owns a proxy loss through `compile` (training-only proxies)."""
    from keras_dml.losses import ProxyAnchorLoss

    model = EmbeddingModel(tiny_backbone(4), embedding_dim=16)
    model.compile(optimizer="adam", loss=ProxyAnchorLoss(num_classes=5, embedding_dim=16))
    return model


def convnet():
    from keras_dml import backbones

    keras.utils.set_random_seed(3)
    return backbones.get("convnet", input_shape=(IMAGE_SIZE, IMAGE_SIZE, 3))


def method_family(spec):
    """Builds the registered method's tiny model on `convnet` (or its default build)."""
    if spec.tiny is not None:
        return spec.tiny_model(convnet())
    config = config_dict({"method": spec.name, "dataset": "digits"})
    return spec.build(config, convnet(), {})


# name -> builder(); every builder returns a built model whose call(images) is [N, D]. Every
# registered training method is a family (plug-ins included): a new method needs no edit here.
FAMILIES = {
    "embedding_single": lambda: EmbeddingModel(tiny_backbone(), embedding_dim=16),
    "embedding_multi_weighted": lambda: EmbeddingModel(
        tiny_backbone(1), learner_dims=(4, 12), learner_weights=(0.25, 0.75), pooling="avgmax"
    ),
    "embedding_with_regressor": lambda: EmbeddingWithRegressor(
        tiny_backbone(2), embedding_dim=12, num_learners=3
    ),
    "embedding_with_loss_layer": embedding_with_loss_layer,
    **{name: functools.partial(method_family, get_method(name)) for name in list_methods()},
}
# Families whose model holds training-only weights that must not be exported.
WITH_TRAINING_ONLY_PARTS = ("embedding_with_regressor", "embedding_with_loss_layer", "bier", "dcml")
BATCH_SIZES = (1, 7)


def digit_images(n, offset=0):
    """sklearn digits as raw RGB pixels: [n, 32, 32, 3] float32 in [0, 255]."""
    from sklearn.datasets import load_digits

    digits = np.round(load_digits().images[offset : offset + n] * (255.0 / 16.0))
    upscaled = np.kron(digits, np.ones((1, 4, 4)))
    return np.repeat(upscaled[..., None], 3, axis=-1).astype("float32")


def keras_output(model, images):
    return keras.ops.convert_to_numpy(model(images.astype("float32"), training=False))


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def exported(request, tmp_path_factory):
    """One model per family, exported once to SavedModel (float32 + uint8) and ONNX (both)."""
    model = FAMILIES[request.param]()
    root = tmp_path_factory.mktemp(request.param)
    reports = {
        "saved_model": export_saved_model(model, root / "saved_model", input_dtype="both"),
        "onnx": export_onnx(model, root / "model.onnx"),
        "onnx_uint8": export_onnx(model, root / "model_uint8.onnx", input_dtype="uint8"),
    }
    return request.param, model, root, reports


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_saved_model_matches_keras(exported, batch_size):
    _, model, root, _ = exported
    loaded = tf.saved_model.load(str(root / "saved_model"))
    images = digit_images(batch_size)
    expected = keras_output(model, images)
    for signature, dtype in (("serving_default", "float32"), ("serve_uint8", "uint8")):
        fn = loaded.signatures[signature]
        actual = fn(images=tf.constant(images.astype(dtype)))["embedding"].numpy()
        assert actual.shape == (batch_size, sum(model.learner_dims))
        np.testing.assert_allclose(actual, expected, rtol=0, atol=ATOL)


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
def test_onnx_matches_keras(exported, batch_size):
    import onnxruntime as ort

    _, model, root, _ = exported
    images = digit_images(batch_size, offset=100)
    expected = keras_output(model, images)
    for name, dtype in (("model.onnx", "float32"), ("model_uint8.onnx", "uint8")):
        session = ort.InferenceSession(str(root / name), providers=["CPUExecutionProvider"])
        assert [i.name for i in session.get_inputs()] == ["images"]
        assert [o.name for o in session.get_outputs()] == ["embedding"]
        (actual,) = session.run(["embedding"], {"images": images.astype(dtype)})
        np.testing.assert_allclose(actual, expected, rtol=0, atol=ATOL)


# name -> the model's weights that `call` does not read (training-only parts and state).
TRAINING_ONLY = {
    "embedding_with_regressor": lambda m: m.regressor.weights,
    "embedding_with_loss_layer": lambda m: m.loss_layer.weights,
    **{
        name: get_method(name).training_only_weights
        for name in list_methods()
        if get_method(name).training_only_weights is not None
    },
}


def inference_weights(name, model):
    """The weights `call` reads: every weight but the family's training-only ones."""
    excluded = {w.path for w in TRAINING_ONLY.get(name, lambda m: [])(model)}
    return [w for w in model.weights if w.path not in excluded]


def test_only_inference_variables_are_exported(exported):
    name, model, root, reports = exported
    used = inference_weights(name, model)
    used_paths = {w.path for w in used}
    for report in reports.values():
        assert report.num_model_weights == len(model.weights)
        assert report.num_variables == len(used)
        assert not used_paths & set(report.excluded_weights)
        assert len(report.excluded_weights) == len(model.weights) - len(used)
        assert all(diff <= ATOL for diff in report.max_abs_diff.values())
    loaded = tf.saved_model.load(str(root / "saved_model"))
    assert len(loaded.variables) == len(used)
    assert sorted(v.shape.as_list() for v in loaded.variables) == sorted(
        list(w.shape) for w in used
    )
    if name in WITH_TRAINING_ONLY_PARTS:
        assert len(used) < len(model.weights), "the family should carry training-only weights"


SUBPROCESS_FAMILIES = ("embedding_multi_weighted", "bier")


def test_saved_model_runs_without_keras_dml(tmp_path):
    """A plain TensorFlow process (no keras_dml import) serves the SavedModels identically."""
    images = digit_images(7, offset=200)
    np.save(tmp_path / "images.npy", images)
    expected = {}
    for name in SUBPROCESS_FAMILIES:
        model = FAMILIES[name]()
        export_saved_model(model, tmp_path / name, input_dtype="both", verify=False)
        expected[name] = keras_output(model, images)
    script = (
        "import json, sys\n"
        "import numpy as np, tensorflow as tf\n"
        "images = np.load('images.npy')\n"
        "signatures = {}\n"
        f"for name in {SUBPROCESS_FAMILIES!r}:\n"
        "    model = tf.saved_model.load(name)\n"
        "    signatures[name] = sorted(model.signatures.keys())\n"
        "    out = model.signatures['serving_default'](images=tf.constant(images))\n"
        "    out8 = model.signatures['serve_uint8'](images=tf.constant(images.astype('uint8')))\n"
        "    np.save(name + '.npy', out['embedding'].numpy())\n"
        "    np.save(name + '_uint8.npy', out8['embedding'].numpy())\n"
        "assert 'keras_dml' not in sys.modules, 'keras_dml was imported'\n"
        "print(json.dumps(signatures))\n"
    )
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    signatures = json.loads(result.stdout.strip().splitlines()[-1])
    for name in SUBPROCESS_FAMILIES:
        assert signatures[name] == ["serve", "serve_uint8", "serving_default"]
        for suffix in ("", "_uint8"):
            actual = np.load(tmp_path / f"{name}{suffix}.npy")
            np.testing.assert_allclose(actual, expected[name], rtol=0, atol=ATOL)
