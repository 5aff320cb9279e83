"""Exports of models built under `mixed_float16` / `mixed_bfloat16` are float32 in, through, out.

Every registered method's tiny model is built under each mixed policy, its weights moved off their
initial values, and exported to a SavedModel and to ONNX. The artifacts must take and return
float32, hold no 16-bit tensor type anywhere in the graph, reproduce the Keras model's own float32
inference (the same method built under `float32` with the same weights) within 1e-5, and stay
within the 16-bit policy's rounding of the mixed model itself. The global dtype policy is the same
after an export as before it, also when the export fails.
"""

import keras
import numpy as np
import onnx
import onnxruntime
import pytest
import tensorflow as tf

from keras_dml import backbones
from keras_dml.export import ExportError, export_onnx, export_saved_model
from keras_dml.export.float32_model import float32_inference_model
from keras_dml.methods import get_method, list_methods
from keras_dml.training.precision import precision_policy

pytestmark = pytest.mark.tf_only("exports SavedModel and ONNX graphs through TensorFlow")

POLICIES = ("mixed_float16", "mixed_bfloat16")
IMAGE_SHAPE = (32, 32, 3)
ATOL = 1e-5  # exported graph vs Keras float32 inference (converter reordering only)
# Exported float32 graph vs the mixed model: the 16-bit rounding of unit-vector embeddings.
MIXED_ATOL = {"mixed_float16": 2e-3, "mixed_bfloat16": 2e-2}
SIXTEEN_BIT_ONNX = {onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


def images(n=4, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.random((n, *IMAGE_SHAPE)) * 255).astype("float32")


def method_model(name, policy, seed=0):
    """`name`'s tiny model built under `policy`, weights moved off their initial values.

    Every float weight is scaled by U(0.5, 1.5) and shifted by N(0, 0.05) (moving variances only
    scaled, so they stay positive), so a rebuild that re-initialised instead of copying the
    weights, or copied them into the wrong places, gives other embeddings. Hierarchical D&C is
    split into two learners, state held in integer variables.
    """
    with precision_policy(policy):
        keras.utils.set_random_seed(seed)
        model = get_method(name).tiny_model(backbones.get("convnet", input_shape=IMAGE_SHAPE))
    if name == "hdc":
        model.split_learners([0, 0])
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        if not keras.backend.is_float_dtype(weight.dtype):
            continue
        value = keras.ops.convert_to_numpy(weight).astype("float64")
        value = value * rng.uniform(0.5, 1.5, value.shape)
        if "variance" not in weight.path:
            value = value + rng.normal(0.0, 0.05, value.shape)
        weight.assign(value.astype(weight.dtype))
    return model


def float32_reference(name, model):
    """The same method built under float32, with `model`'s weights: Keras' own float32 inference."""
    with precision_policy("float32"):
        reference = get_method(name).tiny_model(backbones.get("convnet", input_shape=IMAGE_SHAPE))
    if name == "hdc":
        reference.split_learners([0, 0])
    reference.set_weights(model.get_weights())
    assert reference.backbone.layers[-1].compute_dtype == "float32"
    return reference


def embed(model, batch):
    return keras.ops.convert_to_numpy(model(batch, training=False)).astype("float32")


def sixteen_bit_onnx_types(proto):
    """ONNX element types of 16-bit floats used anywhere in the graph (casts, tensors, values)."""
    graph = proto.graph
    found = {t.data_type for t in graph.initializer} & SIXTEEN_BIT_ONNX
    for value in [*graph.input, *graph.output, *graph.value_info]:
        found |= {value.type.tensor_type.elem_type} & SIXTEEN_BIT_ONNX
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.name == "to":
                found |= {attribute.i} & SIXTEEN_BIT_ONNX
            if attribute.type == onnx.AttributeProto.TENSOR:
                found |= {attribute.t.data_type} & SIXTEEN_BIT_ONNX
    return found


def sixteen_bit_tf_types(signature):
    """TensorFlow 16-bit dtypes named anywhere in a loaded signature's graph and its functions."""
    text = str(signature.graph.as_graph_def())
    return {name for name in ("DT_HALF", "DT_BFLOAT16") if name in text}


# Baseline under both policies and hierarchical D&C (masks, learners split through integer
# variables) under mixed_bfloat16 in the default suite; every other pair, each ~2x slower, in the
# slow one (no size to shrink under KERAS_DML_CI_BUDGET: the models and batches are already the
# smallest the backbone takes).
DEFAULT_SUITE = {("mixed_float16", "baseline"), ("mixed_bfloat16", "baseline")}
DEFAULT_SUITE |= {("mixed_bfloat16", "hdc")}
CASES = [
    pytest.param(policy, name, marks=() if (policy, name) in DEFAULT_SUITE else pytest.mark.slow)
    for policy in POLICIES
    for name in list_methods()
]


@pytest.mark.parametrize("policy, name", CASES)
def test_mixed_precision_exports_stay_float32_in_and_out(policy, name, tmp_path):
    model = method_model(name, policy)
    assert model.backbone.layers[-1].compute_dtype == policy.split("_")[1]  # 16-bit compute
    batch = images()
    expected = embed(float32_reference(name, model), batch)
    mixed = embed(model, batch)
    assert np.abs(mixed - expected).max() > ATOL  # the mixed model really rounds to 16 bits

    report = export_saved_model(model, tmp_path / "sm", atol=ATOL)
    assert report.source_dtype_policy == policy
    assert report.max_abs_diff["float32"] <= ATOL
    assert report.max_abs_diff_source["float32"] <= MIXED_ATOL[policy]
    signature = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    assert signature.structured_input_signature[1]["images"].dtype == tf.float32
    assert sixteen_bit_tf_types(signature) == set()
    output = signature(images=tf.constant(batch))["embedding"]
    assert output.dtype == tf.float32
    np.testing.assert_allclose(output.numpy(), expected, atol=ATOL, rtol=0)
    np.testing.assert_allclose(output.numpy(), mixed, atol=MIXED_ATOL[policy], rtol=0)

    report = export_onnx(model, tmp_path / "model.onnx", atol=ATOL)
    assert report.source_dtype_policy == policy
    proto = onnx.load(str(tmp_path / "model.onnx"))
    assert sixteen_bit_onnx_types(proto) == set()
    metadata = {entry.key: entry.value for entry in proto.metadata_props}
    assert metadata["keras_dml.trained_dtype_policy"].startswith(policy)
    session = onnxruntime.InferenceSession(
        str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    assert [i.type for i in session.get_inputs()] == ["tensor(float)"]
    assert [o.type for o in session.get_outputs()] == ["tensor(float)"]
    (output,) = session.run(None, {"images": batch})
    assert output.dtype == np.float32
    np.testing.assert_allclose(output, expected, atol=ATOL, rtol=0)
    np.testing.assert_allclose(output, mixed, atol=MIXED_ATOL[policy], rtol=0)

    # The model is left as it was: still 16-bit, same embeddings.
    assert model.backbone.layers[-1].compute_dtype == policy.split("_")[1]
    np.testing.assert_array_equal(embed(model, batch), mixed)


def run_artifact(path, batch):
    """Embeddings of `batch` from an exported ONNX file or SavedModel folder."""
    if path.suffix == ".onnx":
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return session.run(None, {"images": batch})[0]
    signature = tf.saved_model.load(str(path)).signatures["serving_default"]
    return signature(images=tf.constant(batch))["embedding"].numpy()


# A SavedModel keeps the 16-bit casts a rebuild under a mixed global policy would add (tf2onnx
# folds a float32 -> 16-bit -> float32 cast pair away).
@pytest.mark.parametrize(
    "previous, artifact", [("mixed_bfloat16", "sm"), ("float32", "model.onnx")]
)
def test_export_leaves_the_global_dtype_policy_as_it_was(previous, artifact, tmp_path):
    model = method_model("baseline", "mixed_float16")
    export = export_onnx if artifact.endswith(".onnx") else export_saved_model
    keras.config.set_dtype_policy(previous)
    try:
        report = export(model, tmp_path / artifact, verify=False)
        assert report.source_dtype_policy == "mixed_float16"
        assert keras.config.dtype_policy().name == previous
    finally:
        keras.config.set_dtype_policy("float32")
    # The rebuild ran under float32, not under the global policy of the time (under which the
    # rebuilt model would cast its input to 16 bits).
    batch = images()
    expected = embed(float32_reference("baseline", model), batch)
    np.testing.assert_allclose(run_artifact(tmp_path / artifact, batch), expected, atol=ATOL)


class Unregistered(keras.layers.Layer):
    """Not registered: its config names a class deserialization cannot find."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, x):
        return x * self.scale


class Unserializable(Unregistered):
    """Takes an object `get_config` cannot record: the model cannot even be serialized."""

    def call(self, x):
        return x * self.scale.value


class Scale:
    value = 2.0


def model_with(layer, policy):
    with precision_policy(policy):
        inputs = keras.Input(IMAGE_SHAPE)
        x = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(4, 3)(inputs))
        return keras.Model(inputs, keras.layers.UnitNormalization(dtype="float32")(layer(x)))


@pytest.mark.parametrize(
    "layer", [Unregistered(2.0), Unserializable(Scale())], ids=["unregistered", "unserializable"]
)
def test_failed_rebuild_names_the_fix_and_restores_the_global_policy(layer, tmp_path):
    model = model_with(layer, "mixed_bfloat16")
    keras.config.set_dtype_policy("mixed_float16")
    try:
        with pytest.raises(ExportError, match="mixed_bfloat16.*register_keras_serializable"):
            export_onnx(model, tmp_path / "model.onnx")
        assert keras.config.dtype_policy().name == "mixed_float16"
    finally:
        keras.config.set_dtype_policy("float32")
    assert not (tmp_path / "model.onnx").exists()


def test_float32_model_that_cannot_be_serialized_exports_as_before(tmp_path):
    model = model_with(Unserializable(Scale()), "float32")
    assert float32_inference_model(model) == (model, None)
    report = export_onnx(model, tmp_path / "model.onnx")
    assert report.source_dtype_policy is None and report.max_abs_diff["float32"] <= ATOL


@keras.saving.register_keras_serializable(package="keras_dml_tests")
class NoBuildConfig(keras.Model):
    """Built on first call, but records no build information for its rebuild."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = keras.layers.Dense(2)

    def call(self, x):
        return self.dense(x)

    def get_build_config(self):
        return None


def test_rebuild_without_build_information_names_the_fix():
    with precision_policy("mixed_bfloat16"):
        model = NoBuildConfig()
        model(np.zeros((1, 3), "float32"))
    with pytest.raises(ExportError, match="no build information.*build_from_config"):
        float32_inference_model(model)


def test_float32_models_are_exported_as_they_are(tmp_path):
    model = method_model("baseline", "float32")
    assert float32_inference_model(model) == (model, None)
    report = export_saved_model(model, tmp_path / "sm")
    assert report.source_dtype_policy is None and report.max_abs_diff_source == {}


def test_rebuild_keeps_explicit_float32_layers_and_other_dtypes():
    with precision_policy("mixed_bfloat16"):
        inputs = keras.Input((4,), dtype="float32")
        hidden = keras.layers.Dense(3, name="mixed")(inputs)
        output = keras.layers.Dense(2, dtype="float32", name="head")(hidden)
        model = keras.Model(inputs, output)
    rebuilt, policy = float32_inference_model(model)
    assert policy == "mixed_bfloat16"
    assert rebuilt is not model
    layers = {layer.name: layer for layer in rebuilt.layers}
    assert layers["mixed"].dtype_policy.name == "float32"
    assert layers["head"].dtype_policy.name == "float32"
    assert model.get_layer("mixed").dtype_policy.name == "mixed_bfloat16"  # source untouched
    for a, b in zip(model.get_weights(), rebuilt.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_cli_exports_a_saved_mixed_bfloat16_model_in_float32(tmp_path, capsys):
    """The README's path: a run trained with `--precision mixed_bfloat16` saves `model.keras`;
    `keras-dml export` loads it (backbone layers still bfloat16) and writes a float32 graph."""
    from keras_dml_cli import main

    model = method_model("baseline", "mixed_bfloat16")
    model.save(tmp_path / "model.keras")
    output = tmp_path / "model.onnx"
    assert (
        main(["export", str(tmp_path / "model.keras"), "--format", "onnx", "--output", str(output)])
        == 0
    )
    assert "trained under mixed_bfloat16, exported in float32" in capsys.readouterr().out
    assert sixteen_bit_onnx_types(onnx.load(str(output))) == set()
    batch = images()
    expected = embed(float32_reference("baseline", model), batch)
    np.testing.assert_allclose(run_artifact(output, batch), expected, atol=ATOL, rtol=0)
