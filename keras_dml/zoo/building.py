"""Building a model from its serialized config with `safe_mode=True`, then loading its weights."""

import json
from pathlib import Path

from keras_dml.zoo.errors import UnsafeFormatError


def build_model(config, weights_path, preprocessing, source):
    """Builds a `keras.Model` from its serialized config (`safe_mode=True`), then loads weights.

    Args:
        config: dict. `keras.saving.serialize_keras_object(model)`.
        weights_path: str or path. The verified `.weights.h5` file.
        preprocessing: dict. The card's `preprocessing` (builds an unbuilt model).
        source: str or path. Where the config came from, for messages.
    """
    import keras
    import numpy as np

    try:
        model = keras.saving.deserialize_keras_object(config, safe_mode=True)
    except ValueError as error:
        if "safe_mode" in str(error):
            raise UnsafeFormatError(
                f"The config in {source} needs code that safe_mode refuses to deserialize: {error}"
            ) from error
        raise
    if not isinstance(model, keras.Model):
        raise TypeError(
            f"The model config in {source} builds a {type(model).__name__}, not a keras.Model."
        )
    if not model.built:
        height, width = preprocessing["input_size"]
        channels = preprocessing.get("channels", 3)
        model(np.zeros((1, height, width, channels), dtype="float32"))
    model.load_weights(weights_path)
    return model


def read_config(path):
    """Reads a model config JSON file (a dict with `class_name`), naming the file on failure."""
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"Cannot read the model config {path}: {error}") from error
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(
            f"{path} is not a serialized Keras model (no 'class_name'); write it with "
            "keras.saving.serialize_keras_object(model)."
        )
    return config
