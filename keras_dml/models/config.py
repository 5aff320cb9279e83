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
      "backbone": {"name": "vgg_small", "weights": null, "freeze_batchnorm": false},
                                         # vgg_small: the default because it is competitive
                                         # (benchmarks/accuracy.py); "convnet" is cheaper per step
      "model": {"embedding_dim": 64},    # constructor keyword arguments of the method's model
      "loss": null,                      # keras_dml.losses.get(...) arguments; null = the
                                         # method's default (normalised softmax for the
                                         # baseline, the paper's loss for each ensemble)
      "optimizer": {"name": "adam", "learning_rate": 1e-3},
                                         # + "lr_multipliers": {pattern: factor} over variable
                                         # paths (ProxyAnchor: {"proxies$": 100} unless set)
      "epochs": 10, "seed": 0,
      "batch_size": null, "m_per_class": null,  # null: fitted to the training split (64 images,
                                         # 4 per class when the split has 16 classes or more)
      "eval_every": 1,                   # validation retrieval metrics every N epochs
      "strategy": "default",             # "default", "mirrored" (local devices),
                                         # "multi_worker" (TF_CONFIG), "data_parallel" (JAX)
      "precision": "float32",            # "float32", "mixed_float16", "mixed_bfloat16"
      "method_options": {}               # method-specific training options
    }
"""

import contextlib
import copy
import json
import os

from keras_dml.utils.suggestions import did_you_mean, did_you_mean_keys

DEFAULTS = {
    "data_dir": None,
    "dataset_options": {},
    "image_size": 32,
    "augmentation": None,
    "backbone": {"name": "vgg_small", "weights": None, "freeze_batchnorm": False},
    "model": {},
    "loss": None,
    "optimizer": {"name": "adam", "learning_rate": 1e-3},
    "epochs": 10,
    "batch_size": None,
    "m_per_class": None,
    "seed": 0,
    "eval_every": 1,
    "strategy": "default",
    "precision": "float32",
    "method_options": {},
}

# Values of the `strategy` and `precision` settings (keras_dml.training.strategy and
# keras_dml.training.precision build them; the backend check happens there, at training time).
STRATEGIES = ("default", "mirrored", "multi_worker", "data_parallel")
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")

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
            f"Unknown configuration keys {unknown}.{did_you_mean_keys(unknown, KNOWN_KEYS)} "
            f"Known keys: {sorted(KNOWN_KEYS)}. "
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
    check_values(resolved)
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
    hint = did_you_mean(augmentation, AUGMENTATIONS) if isinstance(augmentation, str) else ""
    raise ValueError(
        f"Unknown `augmentation` in the run configuration.{hint} Use null, one of {AUGMENTATIONS}, "
        "or a Keras preprocessing pipeline (a layer or its serialized dict). "
        f"Received: augmentation={augmentation!r}"
    )


# Settings that must be positive integers (`None` allowed where the default is `None`).
POSITIVE_INTS = ("epochs", "image_size", "batch_size", "m_per_class", "eval_every")
# How a user sets each checked key on the command line (`eval_every` has no flag of its own).
FLAGS = {"eval_every": "--set eval_every=N"}
DICT_KEYS = ("dataset_options", "backbone", "model", "optimizer", "method_options")


def check_values(config):
    """Checks the types and ranges of a resolved configuration's top-level values.

    Args:
        config: dict. A configuration with every key present.

    Raises:
        ValueError: naming the key, the value and the fix (the CLI flag where there is one).
    """
    for key in POSITIVE_INTS:
        value = config[key]
        if value is None and DEFAULTS.get(key, 0) is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            flag = FLAGS.get(key, "--" + key.replace("_", "-") + " N")
            raise ValueError(
                f'`{key}` must be a positive integer (CLI: {flag}, config: "{key}": N). '
                f"Received: {key}={value!r}"
            )
    _check_positive_number(
        config["model"].get("embedding_dim"),
        "model.embedding_dim",
        '(CLI: --embedding-dim N, config: "model": {"embedding_dim": N})',
        integer=True,
    )
    _check_positive_number(
        config["optimizer"].get("learning_rate"),
        "optimizer.learning_rate",
        '(CLI: --learning-rate X, config: "optimizer": {"learning_rate": X}; a schedule is '
        "an object)",
    )
    for key in DICT_KEYS:
        if not isinstance(config[key], dict):
            raise ValueError(f"`{key}` must be a JSON object. Received: {key}={config[key]!r}")
    if config["loss"] is not None and not isinstance(config["loss"], dict):
        raise ValueError(
            "`loss` must be null (the method's default) or an object such as "
            f'{{"name": "margin", "margin": 0.2}}. Received: loss={config["loss"]!r}'
        )
    for key, valid in (("strategy", STRATEGIES), ("precision", PRECISIONS)):
        if config[key] not in valid:
            raise ValueError(
                f"Unknown `{key}`.{did_you_mean(config[key], valid)} Use one of {valid} (CLI: "
                f"--{key}, config: "
                f'"{key}": "{valid[0]}"). Received: {key}={config[key]!r}'
            )
    batch_size, m = config["batch_size"], config["m_per_class"]
    if batch_size is not None and m is not None and batch_size % m != 0:
        raise ValueError(
            "`batch_size` must be a multiple of `m_per_class` (CLI: --batch-size, "
            f"--m-per-class). Received: batch_size={batch_size}, m_per_class={m}"
        )


def _check_positive_number(value, name, fix, integer=False):
    """Raises for a set `value` that is not a positive number (int with `integer`).

    `None` (not set: the method's default) and objects (e.g. a learning-rate schedule) pass.
    """
    if value is None or isinstance(value, dict):
        return
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not 0 < value < float("inf"):
        kind = "integer" if integer else "number"
        raise ValueError(f"`{name}` must be a positive {kind} {fix}. Received: {name}={value!r}")


def parse_overrides(pairs):
    """Turns `--set KEY=VALUE` strings into a nested dict of overrides.

    VALUE is parsed as JSON when it parses, else kept as a string; a dotted KEY sets a nested
    entry (`model.num_learners=2`, `loss.margin=0.1`).

    Args:
        pairs: iterable of str, e.g. `["epochs=3", "data_dir=/x", "model.num_learners=2"]`.

    Returns:
        dict, e.g. `{"epochs": 3, "data_dir": "/x", "model": {"num_learners": 2}}`.

    Raises:
        ValueError: for an entry without `=`.

    Examples:
    >>> parse_overrides(["epochs=3", "model.num_learners=2"])
    {'epochs': 3, 'model': {'num_learners': 2}}
    """
    overrides = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(
                f"--set needs KEY=VALUE, e.g. --set epochs=3 or --set model.num_learners=2. "
                f"Received: {pair!r}"
            )
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(value)
        *parents, leaf = key.split(".")
        target = overrides
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = value
    return overrides


def merge_overrides(config, overrides):
    """`config` with `overrides` applied; nested dicts are merged key by key."""
    merged = dict(config)
    for key, value in (overrides or {}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_overrides(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_config(path, overrides=None):
    """Reads a JSON run configuration and applies `overrides` (a dict, merged) on top."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No configuration file at {path!r}.")
    with open(path) as f:
        try:
            config = json.load(f)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from error
    return resolve_config(merge_overrides(config, overrides))
