"""Checks of a run configuration's keys and values, each failing with one line naming the fix."""

import keras

from keras_dml import backbones  # noqa: F401 (importing it registers the built-in backbones)
from keras_dml.backbones.registry import get_spec
from keras_dml.data.transform_options import AUGMENTATIONS
from keras_dml.methods.defaults import accepted_arguments, find_optimizer_class
from keras_dml.utils.suggestions import closest, did_you_mean

# Values of the `strategy` and `precision` settings (keras_dml.training.strategy and
# keras_dml.training.precision build them; the backend check happens there, at training time).
STRATEGIES = ("default", "mirrored", "multi_worker", "data_parallel")
PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")

# Settings that must be positive integers (`None` allowed where the default is `None`).
POSITIVE_INTS = ("epochs", "image_size", "batch_size", "m_per_class", "eval_every")
# How a user sets each checked key on the command line (`eval_every` has no flag of its own).
FLAGS = {"eval_every": "--set eval_every=N"}
DICT_KEYS = ("dataset_options", "backbone", "model", "optimizer", "method_options")
# Keys of the `backbone` entry besides the named backbone's own options (`keras_dml.backbones.get`).
BACKBONE_KEYS = ("name", "weights", "freeze_batchnorm", "batchnorm_momentum")
# Keys of the `optimizer` entry besides the named optimizer's arguments.
OPTIMIZER_KEYS = ("name", "lr_multipliers")
# Nested keys suggested for a misplaced top-level key (`learning_rate`: `optimizer.learning_rate`).
NESTED_HINTS = (
    "optimizer.learning_rate",
    "optimizer.weight_decay",
    "optimizer.lr_multipliers",
    "backbone.weights",
    "backbone.freeze_batchnorm",
    "model.embedding_dim",
    "model.num_learners",
)


def unknown_keys_error(unknown, known, section=None, nested=()):
    """The one-line `ValueError` for unknown run-configuration keys, with the closest known key.

    Args:
        unknown: list of str. The keys that are not accepted.
        known: iterable of str. The accepted keys of that level.
        section: str or `None`. The entry the keys are in, `None` at the top. Defaults to `None`.
        nested: iterable of str. Dotted keys also suggested. Defaults to `()`.

    Returns:
        `ValueError`.

    Examples:
    >>> error = unknown_keys_error(["learning_rat"], ["learning_rate"], section="optimizer")
    >>> str(error).split("?")[0]
    "Unknown run-configuration key 'optimizer.learning_rat'. Did you mean 'optimizer.learning_rate'"
    """
    prefix = f"{section}." if section else ""
    by_leaf = {key.rsplit(".", 1)[-1]: key for key in nested}
    candidates = {**by_leaf, **{key: prefix + key for key in known}}
    names = [prefix + key for key in unknown]
    matches = [(name, closest(key, candidates)) for name, key in zip(names, unknown)]
    if len(names) == 1:
        head = f"Unknown run-configuration key {names[0]!r}."
        hint = f" Did you mean {candidates[matches[0][1]]!r}?" if matches[0][1] else ""
    else:
        head = f"Unknown run-configuration keys {names}."
        pairs = [f"{candidates[match]!r} for {name!r}" for name, match in matches if match]
        hint = f" Did you mean {', '.join(pairs)}?" if pairs else ""
    where = f"Known keys of `{section}`" if section else "Known keys"
    tail = "" if section else " Method-specific settings go under `method_options`."
    return ValueError(f"{head}{hint} {where}: {sorted(known)}.{tail}")


def check_top_level_keys(config, known):
    """Raises for a key of `config` outside `known`, or a missing `method` or `dataset`."""
    if not isinstance(config, dict):
        raise ValueError(f"A run configuration must be a JSON object. Received: {config!r}")
    unknown = sorted(set(config) - set(known))
    if unknown:
        raise unknown_keys_error(unknown, known, nested=NESTED_HINTS)
    for key in ("method", "dataset"):
        if key not in config:
            raise ValueError(f"The run configuration needs a `{key}` entry (CLI: --{key}).")


def check_section_keys(section, entry, known):
    """Raises for a key of the `section` entry outside `known`."""
    known = set(known)
    unknown = sorted(set(entry) - known)
    if unknown:
        raise unknown_keys_error(unknown, known, section=section)


def check_backbone_keys(entry):
    """Raises for an unknown backbone name, or a key outside `BACKBONE_KEYS` and its options."""
    spec = get_spec(entry.get("name"))
    check_section_keys("backbone", entry, (*BACKBONE_KEYS, *spec.options))


def check_optimizer_keys(entry):
    """Raises for an unknown optimizer name, or a key outside `OPTIMIZER_KEYS` and its arguments."""
    optimizer_class = find_optimizer_class(entry.get("name", "adam"), entry)
    check_section_keys("optimizer", entry, (*OPTIMIZER_KEYS, *accepted_arguments(optimizer_class)))


def check_config_augmentation(augmentation):
    """The `augmentation` entry as `config.json` holds it: a Keras layer is serialized.

    Args:
        augmentation: `None`, a name of `AUGMENTATIONS`, a Keras preprocessing layer, or its dict.

    Raises:
        ValueError: anything else, naming the accepted values.
    """
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


def check_values(config):
    """Raises for a top-level value of the wrong type or range, naming the flag that fixes it."""
    for key in POSITIVE_INTS:
        value = config[key]
        if value is None and key in ("batch_size", "m_per_class"):
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
    """Raises for a `value` that is not a positive number; `None` and dicts (schedules) pass."""
    if value is None or isinstance(value, dict):
        return
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not 0 < value < float("inf"):
        kind = "integer" if integer else "number"
        raise ValueError(f"`{name}` must be a positive {kind} {fix}. Received: {name}={value!r}")
