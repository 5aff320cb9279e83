"""The run configuration: one typed, documented object describes a training run end to end.

`RunConfig.from_dict(d)`, `RunConfig.from_json(path)` and `keras-dml train`'s flags build it once,
with the defaults filled in and every key and value checked; `to_dict()` / `to_json()` give back
what a run's `config.json` holds, so a saved run loads again with `RunConfig.from_json`. A JSON
file holds the fields of `RunConfig` (every one but `method` and `dataset` has a default)::

    {"method": "dc", "dataset": "digits", "backbone": {"name": "convnet"},
     "model": {"embedding_dim": 64, "num_learners": 4}, "epochs": 3,
     "optimizer": {"name": "adam", "learning_rate": 1e-3}, "method_options": {}}
"""

import copy
import dataclasses
import json
import os

from keras_dml.training.config_overrides import merge_overrides, parse_overrides
from keras_dml.training.run_config_checks import (
    PRECISIONS,
    STRATEGIES,
    check_backbone_keys,
    check_config_augmentation,
    check_optimizer_keys,
    check_top_level_keys,
    check_values,
)

__all__ = [
    "DEFAULTS",
    "KNOWN_KEYS",
    "PRECISIONS",
    "STRATEGIES",
    "RunConfig",
    "check_config_augmentation",
    "check_values",
    "load_config",
    "merge_overrides",
    "parse_overrides",
    "read_config_file",
    "resolve_config",
]


def _default(value):
    return dataclasses.field(default_factory=lambda: copy.deepcopy(value))


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A training run's settings: data, model, loss, optimizer, schedule and devices.

    Args:
        method: str. The training method, one of `keras_dml.methods.list_methods()`.
        dataset: str. One of `keras_dml.data.list_datasets()`.
        description: str or `None`. What the recipe is (kept in `config.json`; optional).
        paper: str or `None`. The paper the recipe follows (optional).
        data_dir: str or `None`. Folder in the dataset's official layout. Defaults to `None`.
        dataset_options: dict. Extra keyword arguments of `load_dataset`. Defaults to `{}`.
        image_size: int. Training and evaluation crop size in pixels. Defaults to `32`.
        augmentation: training augmentation: `"none"`, `"flip"`, `"crop"`, `"crop_flip"`,
            `"resized_crop"`, `"resized_crop_flip"`, a serialized Keras preprocessing pipeline,
            or `None` (the dataset's default: crop_flip for image files, none for arrays).
        backbone: dict. `name` and `keras_dml.backbones.get` arguments (`weights`,
            `freeze_batchnorm`, `batchnorm_momentum`, the backbone's own options); a string is
            the name. Defaults to `{"name": "vgg_small", "weights": None, "freeze_batchnorm":
            False}` (vgg_small is competitive, `benchmarks/accuracy.py`; convnet is cheaper).
        model: dict. Constructor keyword arguments of the method's model (`embedding_dim`,
            `num_learners`, ...). Defaults to `{}`.
        loss: dict or `None`. `keras_dml.losses.get` arguments (`{"name": "margin", "margin":
            0.2}`); `None` is the method's default (normalised softmax for the baseline, the
            paper's loss for each ensemble). Defaults to `None`.
        optimizer: dict. `name` (any `keras.optimizers` name), its arguments, and optionally
            `lr_multipliers` (`{pattern: factor}` over variable paths; ProxyAnchor gets
            `{"proxies$": 100}` unless set). Defaults to `{"name": "adam", "learning_rate":
            1e-3}`.
        epochs: int. Training epochs. Defaults to `10`.
        batch_size: int or `None`. `None`: fitted to the training split (about 64 images).
        m_per_class: int or `None`. Images per class in a batch; `None`: fitted (at least 4).
        seed: int. Seed of the batches, crops and weights. Defaults to `0`.
        eval_every: int. Validation retrieval metrics every N epochs. Defaults to `1`.
        strategy: str. `"default"`, `"mirrored"` (local devices), `"multi_worker"`
            (`TF_CONFIG`) or `"data_parallel"` (JAX). Defaults to `"default"`.
        precision: str. `"float32"`, `"mixed_float16"` or `"mixed_bfloat16"`. Defaults to
            `"float32"`.
        method_options: dict. The method's own training options (its `MethodSpec.options`
            dataclass). Defaults to `{}`.

    Examples:
    >>> config = RunConfig.from_dict({"method": "baseline", "dataset": "digits"})
    >>> config.epochs, config.backbone["name"]
    (10, 'vgg_small')
    >>> RunConfig.from_dict(config.to_dict()) == config
    True
    """

    method: str
    dataset: str
    description: str = None
    paper: str = None
    data_dir: str = None
    dataset_options: dict = _default({})
    image_size: int = 32
    augmentation: object = None
    backbone: dict = _default({"name": "vgg_small", "weights": None, "freeze_batchnorm": False})
    model: dict = _default({})
    loss: dict = None
    optimizer: dict = _default({"name": "adam", "learning_rate": 1e-3})
    epochs: int = 10
    batch_size: int = None
    m_per_class: int = None
    seed: int = 0
    eval_every: int = 1
    strategy: str = "default"
    precision: str = "float32"
    method_options: dict = _default({})

    @classmethod
    def from_dict(cls, config):
        """Builds the configuration of a dict, filling defaults and checking every value.

        Nested entries (`backbone`, `optimizer`, `model`, ...) are merged key by key over their
        defaults; a `backbone` string is its name; a Keras `augmentation` layer is serialized.

        Args:
            config: dict. A (partial) run configuration, or a saved run's `config.json`.

        Returns:
            `RunConfig`.

        Raises:
            ValueError: in one line, for an unknown key (with the closest known one, nested
                keys of `backbone` and `optimizer` too), a missing `method` / `dataset`, or a
                value out of range.
        """
        check_top_level_keys(config, KNOWN_KEYS)
        values = copy.deepcopy(DEFAULTS)
        for key, value in config.items():
            if key == "backbone" and isinstance(value, str):
                value = {"name": value}
            if key == "augmentation":
                value = check_config_augmentation(value)
            if isinstance(values.get(key), dict) and isinstance(value, dict):
                values[key] = {**values[key], **copy.deepcopy(value)}
            else:
                values[key] = copy.deepcopy(value)
        check_values(values)
        check_backbone_keys(values["backbone"])
        check_optimizer_keys(values["optimizer"])
        return cls(**values)

    @classmethod
    def from_json(cls, path, overrides=None):
        """Reads a JSON run configuration (e.g. a run's `config.json`) with `overrides` on top.

        Args:
            path: str. The JSON file.
            overrides: dict or `None`. Merged key by key (`config_overrides.parse_overrides`
                turns `--set` strings into one).

        Returns:
            `RunConfig`.

        Raises:
            FileNotFoundError: no file at `path`.
            ValueError: the file is not JSON, or its configuration is invalid.
        """
        return cls.from_dict(merge_overrides(read_config_file(path), overrides))

    def to_dict(self):
        """The configuration as `config.json` holds it: every key, `description` / `paper`
        only when set. A deep copy: changing it leaves this object unchanged."""
        values = copy.deepcopy(dataclasses.asdict(self))
        for key in OPTIONAL_KEYS:
            if values[key] is None:
                del values[key]
        return values

    def __getitem__(self, key):
        """Read access by key, as code written for the dict form does (`config["epochs"]`);
        a copy of the value, so the configuration stays as built."""
        if key not in KNOWN_KEYS:
            raise KeyError(
                f"{key!r} is not a run-configuration key. Known keys: {sorted(KNOWN_KEYS)}"
            )
        return copy.deepcopy(getattr(self, key))

    def get(self, key, default=None):
        """`self[key]`, or `default` for a key that is not a run-configuration key."""
        return self[key] if key in KNOWN_KEYS else default

    def to_json(self, path=None):
        """The configuration as JSON text (indent 2), also written to `path` when given."""
        text = json.dumps(self.to_dict(), indent=2)
        if path is not None:
            with open(path, "w") as f:
                f.write(text)
        return text


# Keys kept in `config.json` only when set (recipe metadata).
OPTIONAL_KEYS = ("description", "paper")
KNOWN_KEYS = {field.name for field in dataclasses.fields(RunConfig)}
# Defaults of every key but `method` and `dataset`.
DEFAULTS = {
    key: value
    for key, value in RunConfig(method="", dataset="").to_dict().items()
    if key not in ("method", "dataset")
}


def read_config_file(path):
    """The JSON object of a run-configuration file, as written (nothing filled in or checked).

    Raises:
        FileNotFoundError: no file at `path`.
        ValueError: the file is not valid JSON.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No configuration file at {path!r}.")
    with open(path) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from error


def resolve_config(config):
    """The dict form of `RunConfig.from_dict(config)`: defaults filled in, values checked.

    Args:
        config: dict or `RunConfig`. A (partial) run configuration.

    Returns:
        A new dict with every key present (as `config.json` holds it).

    Examples:
    >>> resolve_config({"method": "baseline", "dataset": "digits"})["epochs"]
    10
    """
    if isinstance(config, RunConfig):
        return config.to_dict()
    return RunConfig.from_dict(config).to_dict()


def load_config(path, overrides=None):
    """The dict form of `RunConfig.from_json(path, overrides)`."""
    return RunConfig.from_json(path, overrides).to_dict()
