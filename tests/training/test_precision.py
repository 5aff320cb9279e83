"""Every method under `mixed_float16` and `mixed_bfloat16`, and the `precision` setting.

A model built under a mixed policy computes its layers in 16 bits with float32 variables; its
output, its losses and the loss layers stay float32, `mixed_float16` steps through Keras'
`LossScaleOptimizer` (also around `LearningRateMultipliers`), and exported graphs take, compute
and give float32 (`tests/export/test_mixed_precision.py` for every method). `precision_policy`
restores the previous global policy.
"""

import keras
import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.methods import get_method, list_methods
from keras_dml.methods.defaults import compile_with_config
from keras_dml.training.precision import precision_policy
from tests.support.ci_rotation import rotating
from tests.support.configs import config_dict, resolved_dict

POLICIES = ("mixed_float16", "mixed_bfloat16")
CLUSTERED = ("dc", "hdc")


def batch():
    rng = np.random.default_rng(0)
    images = (rng.random((16, 32, 32, 3)) * 255).astype("float32")
    labels = np.array([0, 1, 2, 3] * 4, dtype="int32")
    return images, labels


def fit_under(policy, name, steps=2):
    """Builds `name`'s tiny model under `policy`, fits `steps` steps; returns model and history."""
    images, labels = batch()
    with precision_policy(policy):
        spec = get_method(name)
        config = resolved_dict({"method": name, "dataset": "digits", "precision": policy})
        keras.utils.set_random_seed(0)
        model = spec.tiny_model(backbones.get("convnet", input_shape=(32, 32, 3)))
        (spec.compile or compile_with_config)(config, model)
        if name == "hdc":
            model.split_learners([0, 0])
        targets = labels
        if name in CLUSTERED:
            targets = {"labels": labels, "clusters": np.full((16,), 1, "int32")}
        history = model.fit(
            images, targets, batch_size=16 // steps, epochs=1, shuffle=False, verbose=0
        ).history
    return model, history


def check_mixed_model(model, history, policy):
    assert keras.config.dtype_policy().name == "float32"  # the global policy is restored
    compute = "float16" if policy == "mixed_float16" else "bfloat16"
    assert model.backbone.layers[-1].compute_dtype == compute  # the backbone runs in 16 bits
    assert all(v.dtype == "float32" for v in model.trainable_weights)
    heads = [model.embedding] if hasattr(model, "embedding") else model.heads
    assert all(head.compute_dtype == "float32" for head in heads)  # the output head
    images, labels = batch()
    assert keras.backend.standardize_dtype(model(images[:2]).dtype) == "float32"
    for key, values in history.items():
        assert np.all(np.isfinite(values)), f"{key}: {values}"
    loss_scaled = isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    assert loss_scaled == (policy == "mixed_float16")
    metrics = model.evaluate(images, labels, batch_size=8, verbose=0, return_dict=True)
    assert np.isfinite(metrics["loss"])


@pytest.mark.parametrize("policy", POLICIES)
def test_hierarchical_dc_trains_under_mixed_precision(policy):
    """Representative: LearningRateMultipliers (masks x10, frozen backbone) under the policy."""
    model, history = fit_under(policy, "hdc")
    check_mixed_model(model, history, policy)
    assert model.mask_optimizer is not None  # found inside the LossScaleOptimizer too
    # Freezing reaches the multipliers inside the LossScaleOptimizer: the backbone stays put.
    model.set_backbone_frozen(True)
    before = [keras.ops.convert_to_numpy(v) for v in model.backbone.trainable_weights]
    heads = [keras.ops.convert_to_numpy(v) for v in model.heads[0].trainable_weights]
    images, labels = batch()
    targets = {"labels": labels, "clusters": np.full((16,), 1, "int32")}
    for _ in range(4):  # float16: the first steps may be skipped while the loss scale drops
        model.fit(images, targets, batch_size=16, epochs=1, shuffle=False, verbose=0)
    after = [keras.ops.convert_to_numpy(v) for v in model.backbone.trainable_weights]
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    moved = [keras.ops.convert_to_numpy(v) for v in model.heads[0].trainable_weights]
    assert any(not np.array_equal(a, b) for a, b in zip(heads, moved))


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", rotating(list_methods()))
def test_every_method_trains_under_mixed_precision(name, policy):
    model, history = fit_under(policy, name)
    check_mixed_model(model, history, policy)


@pytest.mark.slow
def test_loss_scaling_recovers_from_overflowing_first_steps():
    """BIER's diversity loss (~2.6e3) times the initial loss scale overflows float16: the
    LossScaleOptimizer skips those steps and halves its scale until the steps go through."""
    model, history = fit_under("mixed_float16", "bier", steps=1)
    images, labels = batch()
    losses = list(history["loss"])
    for _ in range(5):
        losses += model.fit(images, labels, batch_size=16, shuffle=False, verbose=0).history["loss"]
    scale = float(keras.ops.convert_to_numpy(model.optimizer.dynamic_scale))
    assert scale < 32768.0  # overflowing steps were skipped and the scale lowered
    assert int(keras.ops.convert_to_numpy(model.optimizer.iterations)) > 0  # then it stepped
    assert np.all(np.isfinite(losses)) and losses[-1] < losses[0]


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
def test_trained_mixed_precision_model_exports_float32_in_and_out(policy, tmp_path):
    """End to end after `fit` (loss scaling, updated BatchNorm statistics); every method's
    export, untrained, is checked in `tests/export/test_mixed_precision.py`."""
    import onnxruntime
    import tensorflow as tf

    from keras_dml.export import export_onnx, export_saved_model

    model, _ = fit_under(policy, "baseline")
    images, _ = batch()
    mixed = keras.ops.convert_to_numpy(model(images[:4]))
    # The export computes in float32 (parity 1e-5 with its float32 rebuild); the mixed model's
    # 16-bit activations put it within float16 / bfloat16 resolution of unit vectors.
    atol = 2e-3 if policy == "mixed_float16" else 2e-2
    report = export_saved_model(model, tmp_path / "sm")
    assert report.source_dtype_policy == policy
    signature = tf.saved_model.load(str(tmp_path / "sm")).signatures["serving_default"]
    assert signature.structured_input_signature[1]["images"].dtype == tf.float32
    output = signature(images=tf.constant(images[:4]))["embedding"]
    assert output.dtype == tf.float32
    np.testing.assert_allclose(output.numpy(), mixed, atol=atol)

    export_onnx(model, tmp_path / "model.onnx")
    session = onnxruntime.InferenceSession(str(tmp_path / "model.onnx"))
    assert [i.type for i in session.get_inputs()] == ["tensor(float)"]
    assert [o.type for o in session.get_outputs()] == ["tensor(float)"]
    (output,) = session.run(None, {"images": images[:4]})
    assert output.dtype == np.float32
    np.testing.assert_allclose(output, mixed, atol=atol)


def test_precision_policy_restores_the_previous_policy():
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        with precision_policy("mixed_float16"):
            assert keras.config.dtype_policy().name == "mixed_float16"
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
        with pytest.raises(RuntimeError), precision_policy("float32"):
            raise RuntimeError("fails inside")
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
    finally:
        keras.config.set_dtype_policy("float32")


def test_unknown_precision_is_one_line_naming_the_values():
    with pytest.raises(ValueError, match="mixed_bfloat16.*Received: precision='half'") as error:
        config_dict({"method": "baseline", "dataset": "digits", "precision": "half"})
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="Received: precision='half'"), precision_policy("half"):
        pass
