"""Exported graphs compute in float32: a model built under a 16-bit dtype policy is rebuilt."""

import contextlib
import os
import tempfile

import keras

from keras_dml.export.contract import ExportError, keras_embeddings

SIXTEEN_BIT = ("float16", "bfloat16")
FLOAT_POLICY_CLASSES = ("DTypePolicy", "FloatDTypePolicy")


def float32_inference_model(model):
    """Returns the model to trace for export and the 16-bit policy it replaced, if any.

    Args:
        model: `keras.Model`. A built model, possibly under a 16-bit dtype policy.

    Returns:
        `(model, None)` when nothing computes in 16 bits; otherwise a float32 rebuild with the
        same weights, and the 16-bit policy name (several joined with `"+"`).

    Raises:
        ExportError: the model cannot be rebuilt from its configuration, or its weights do not fit.

    References:
        Micikevicius et al., "Mixed Precision Training", ICLR 2018 (float32 master weights).
    """
    found = _sixteen_bit_layers(model)
    try:
        config = keras.saving.serialize_keras_object(model)
    except (NotImplementedError, TypeError, ValueError) as error:
        if not found:  # A float32 model is traced as it is: no config needed.
            return model, None
        raise _rebuild_error(model, found, error) from error
    config.pop("compile_config", None)  # Inference only: no optimizer, no loss scale.
    config = _float32_config(config, found)
    if not found:
        return model, None
    try:
        with _global_policy("float32"):
            rebuilt = keras.saving.deserialize_keras_object(config)
    except (TypeError, ValueError) as error:
        raise _rebuild_error(model, found, error) from error
    policy = "+".join(sorted(found))
    if not rebuilt.built:
        raise ExportError(
            f"Model '{model.name}' ({policy}) was rebuilt in float32 for export but its "
            "configuration carries no build information; implement `get_build_config` / "
            f"`build_from_config` or build it in `__init__`. Received: model={model!r}"
        )
    _copy_weights(model, rebuilt, policy)
    return rebuilt, policy


def source_difference(exported, source, images):
    """Max |exported - source(images)|: how far the float32 graph is from the 16-bit model."""
    expected = keras_embeddings(source, images)
    return float(abs(exported - expected).max()) if expected.size else 0.0


def _sixteen_bit_layers(model):
    """Names of the 16-bit float policies of `model` and of the layers reachable by `.layers`."""
    found, stack, seen = set(), [model], set()
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        policy = layer.dtype_policy
        if policy.quantization_mode is None and policy.compute_dtype in SIXTEEN_BIT:
            found.add(policy.name)
        stack.extend(getattr(layer, "layers", ()))
    return found


def _rebuild_error(model, found, error):
    return ExportError(
        f"Model '{model.name}' computes in 16 bits ({'+'.join(sorted(found))}) and export "
        "rebuilds it in float32 from its configuration, which failed: register its custom "
        "classes with `keras.saving.register_keras_serializable` and give them a complete "
        f"`get_config`, or build the model under the float32 policy. Received: {error}"
    )


def _float32_config(value, found):
    """A copy of a serialized config with every 16-bit float `dtype` entry set to `"float32"`."""
    if isinstance(value, list):
        return [_float32_config(item, found) for item in value]
    if not isinstance(value, dict):
        return value
    copy = {}
    for key, item in value.items():
        name = _sixteen_bit_policy(item) if key == "dtype" else None
        if name is not None:
            found.add(name)
            copy[key] = "float32"
        else:
            copy[key] = _float32_config(item, found)
    return copy


def _sixteen_bit_policy(entry):
    """The policy name when a config `dtype` entry is a 16-bit float policy, else `None`."""
    if isinstance(entry, dict):
        if entry.get("class_name") not in FLOAT_POLICY_CLASSES:
            return None  # Quantized policies and policy maps are left as they are.
        entry = (entry.get("config") or {}).get("name")
    if not isinstance(entry, str):
        return None
    try:
        policy = keras.dtype_policies.get(entry)
    except (TypeError, ValueError):  # A `dtype` argument that is no policy name.
        return None
    if policy.quantization_mode is None and policy.compute_dtype in SIXTEEN_BIT:
        return policy.name
    return None


def _copy_weights(source, target, policy):
    """Copies every weight through a Keras weights file (matched by attribute path)."""
    with tempfile.TemporaryDirectory(prefix="keras_dml_export_") as folder:
        path = os.path.join(folder, "model.weights.h5")
        source.save_weights(path)
        try:
            target.load_weights(path)
        except ValueError as error:
            raise ExportError(
                f"The weights of model '{source.name}' ({policy}) do not fit its float32 "
                "rebuild: some weights are created outside `build` (or its config misses a "
                "setting that shapes them). Create every weight in `build` and keep "
                f"`get_config` complete. Received: {error}"
            ) from error


@contextlib.contextmanager
def _global_policy(name):
    """Sets the global Keras dtype policy to `name` for the block, then restores the previous."""
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(name)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)
