"""Run configurations: one JSON object describes a training run end to end.

Schema (every key but `method` and `dataset` has a default)::

    {
      "method": "baseline",              # see keras_dml.models.list_methods()
      "dataset": "digits",               # see keras_dml.data.list_datasets()
      "data_dir": null,                  # folder in the dataset's official layout
      "dataset_options": {},             # extra keyword arguments of load_dataset
      "image_size": 32,
      "augmentation": null,              # training augmentation: "none", "flip", "crop",
                                         # "crop_flip", "resized_crop", "resized_crop_flip",
                                         # a serialized Keras preprocessing pipeline, or null
                                         # (the dataset's default: crop_flip for image files,
                                         # none for in-memory arrays)
      "backbone": {"name": "convnet", "weights": null, "freeze_batchnorm": false},
      "model": {"embedding_dim": 64},    # constructor keyword arguments of the method's model
      "loss": {"name": "margin"},        # keras_dml.losses.get(...) arguments; null = the
                                         # method's default (margin loss for most)
      "optimizer": {"name": "adam", "learning_rate": 1e-3},
      "epochs": 10, "batch_size": 64, "m_per_class": 4, "seed": 0,
      "eval_every": 1,                   # validation retrieval metrics every N epochs
      "method_options": {}               # method-specific training options
    }
"""

import copy
import json
import os

DEFAULTS = {
    "data_dir": None,
    "dataset_options": {},
    "image_size": 32,
    "augmentation": None,
    "backbone": {"name": "convnet", "weights": None, "freeze_batchnorm": False},
    "model": {},
    "loss": None,
    "optimizer": {"name": "adam", "learning_rate": 1e-3},
    "epochs": 10,
    "batch_size": 64,
    "m_per_class": 4,
    "seed": 0,
    "eval_every": 1,
    "method_options": {},
}

KNOWN_KEYS = set(DEFAULTS) | {"method", "dataset", "description", "paper"}


def resolve_config(config):
    """Fills defaults in a run configuration and checks it.

    Args:
        config: dict. A (partial) run configuration, see the module docstring.

    Returns:
        A new dict with every key present.

    Raises:
        ValueError: for unknown keys or missing `method` / `dataset`.

    Examples:
    >>> resolve_config({"method": "baseline", "dataset": "digits"})["epochs"]
    10
    """
    if not isinstance(config, dict):
        raise ValueError(f"A run configuration must be a JSON object. Received: {config!r}")
    unknown = sorted(set(config) - KNOWN_KEYS)
    if unknown:
        raise ValueError(
            f"Unknown configuration keys {unknown}. Known keys: {sorted(KNOWN_KEYS)}. "
            "Method-specific settings go under `method_options`."
        )
    for key in ("method", "dataset"):
        if key not in config:
            raise ValueError(f"The run configuration needs a `{key}` entry.")
    resolved = copy.deepcopy(DEFAULTS)
    for key, value in config.items():
        if key == "backbone" and isinstance(value, str):
            value = {"name": value}
        if key == "augmentation":
            value = check_config_augmentation(value)
        if isinstance(resolved.get(key), dict) and isinstance(value, dict):
            resolved[key] = {**resolved[key], **copy.deepcopy(value)}
        else:
            resolved[key] = copy.deepcopy(value)
    if resolved["batch_size"] % resolved["m_per_class"] != 0:
        raise ValueError(
            "`batch_size` must be a multiple of `m_per_class`. Received: "
            f"batch_size={resolved['batch_size']}, m_per_class={resolved['m_per_class']}"
        )
    return resolved


def check_config_augmentation(augmentation):
    """Validates the `augmentation` entry; a Keras layer is stored in its serialized form.

    Args:
        augmentation: `None`, a name of `keras_dml.data.preprocessing.AUGMENTATIONS`, a Keras
            preprocessing layer or pipeline (e.g. `keras.Sequential` of random layers), or its
            `keras.saving.serialize_keras_object` dict.

    Returns:
        `None`, the name, or the serialized dict (JSON-friendly, saved in `config.json`).

    Raises:
        ValueError: anything else, naming the accepted values.
    """
    import keras

    from keras_dml.data.preprocessing import AUGMENTATIONS

    if isinstance(augmentation, keras.layers.Layer):
        return keras.saving.serialize_keras_object(augmentation)
    if augmentation is None or augmentation in AUGMENTATIONS:
        return augmentation
    if isinstance(augmentation, dict) and "class_name" in augmentation:
        return augmentation
    raise ValueError(
        f"Unknown `augmentation` in the run configuration; use null, one of {AUGMENTATIONS}, "
        "or a Keras preprocessing pipeline (a layer or its serialized dict). "
        f"Received: augmentation={augmentation!r}"
    )


def load_config(path, overrides=None):
    """Reads a JSON run configuration and applies `overrides` (a dict) on top."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No configuration file at {path!r}.")
    with open(path) as f:
        try:
            config = json.load(f)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from error
    config.update(overrides or {})
    return resolve_config(config)
