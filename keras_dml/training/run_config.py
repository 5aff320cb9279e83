"""The run configuration: one typed object read once from a dict, a JSON file or the CLI flags."""

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
from keras_dml.training.sections import (
    SECTIONS,
    BackboneSection,
    LossSection,
    MethodOptionsSection,
    ModelSection,
    OptimizerSection,
    Section,
)

__all__ = [
    "DEFAULTS",
    "KNOWN_KEYS",
    "PRECISIONS",
    "STRATEGIES",
    "RunConfig",
    "check_config_augmentation",
    "check_values",
    "merge_overrides",
    "parse_overrides",
    "read_config_file",
]


def _default(value):
    return dataclasses.field(default_factory=lambda: copy.deepcopy(value))


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A training run's settings: data, model, loss, optimizer, schedule and devices.

    Args:
        method: str. The training method, one of `keras_dml.methods.list_methods()`.
        dataset: str. One of `keras_dml.data.list_datasets()`.
        description: str or `None`. What the recipe is (kept in `config.json`). Optional.
        paper: str or `None`. The paper the recipe follows. Optional.
        data_dir: str or `None`. Folder in the dataset's official layout. Defaults to `None`.
        dataset_options: dict. Extra keyword arguments of `load_dataset`. Defaults to `{}`.
        image_size: int. Training and evaluation crop size in pixels. Defaults to `32`.
        augmentation: str, dict or `None`. A name or a serialized Keras layer. Defaults to `None`.
        backbone: dict or str. `backbones.get` arguments, or the name. Defaults to `"vgg_small"`.
        model: dict. Keyword arguments of the method's model. Defaults to `{}`.
        loss: dict or `None`. `losses.get` arguments; `None`: the method's. Defaults to `None`.
        optimizer: dict. `name`, its arguments and `lr_multipliers`. Defaults to Adam at `1e-3`.
        epochs: int. Training epochs. Defaults to `10`.
        batch_size: int or `None`. `None` is fitted to the training split. Defaults to `None`.
        m_per_class: int or `None`. Images per class in a batch, fitted. Defaults to `None`.
        seed: int. Seed of the batches, crops and weights. Defaults to `0`.
        eval_every: int. Validation retrieval metrics every N epochs. Defaults to `1`.
        strategy: str. One of `STRATEGIES`. Defaults to `"default"`.
        precision: str. One of `PRECISIONS`. Defaults to `"float32"`.
        method_options: dict. The fields of the method's `MethodSpec.options`. Defaults to `{}`.

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
    backbone: BackboneSection = dataclasses.field(default_factory=BackboneSection)
    model: ModelSection = dataclasses.field(default_factory=ModelSection)
    loss: LossSection = None
    optimizer: OptimizerSection = dataclasses.field(default_factory=OptimizerSection)
    epochs: int = 10
    batch_size: int = None
    m_per_class: int = None
    seed: int = 0
    eval_every: int = 1
    strategy: str = "default"
    precision: str = "float32"
    method_options: MethodOptionsSection = dataclasses.field(default_factory=MethodOptionsSection)

    @classmethod
    def from_dict(cls, config):
        """Builds the configuration of a dict, merged key by key over the defaults and checked.

        Args:
            config: dict. A (partial) run configuration, or a saved run's `config.json`.

        Returns:
            `RunConfig`.

        Raises:
            ValueError: for an unknown or missing key, or a value out of range.
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
        for key, section in SECTIONS.items():
            if values[key] is not None:
                values[key] = section.from_entry(values[key])
        return cls(**values)

    @classmethod
    def from_json(cls, path, overrides=None):
        """Reads a JSON run configuration (e.g. a run's `config.json`) with `overrides` on top.

        Args:
            path: str. The JSON file.
            overrides: dict or `None`. Merged key by key, e.g. from `parse_overrides`.

        Returns:
            `RunConfig`.

        Raises:
            FileNotFoundError: no file at `path`.
            ValueError: the file is not JSON, or its configuration is invalid.
        """
        return cls.from_dict(merge_overrides(read_config_file(path), overrides))

    def to_dict(self):
        """The configuration as `config.json` holds it (a deep copy)."""
        values = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            values[field.name] = value.as_dict() if isinstance(value, Section) else value
        values = copy.deepcopy(values)
        for key in OPTIONAL_KEYS:
            if values[key] is None:
                del values[key]
        return values

    def __getitem__(self, key):
        """A copy of the value of `key` (`config["epochs"]`), as the dict form reads."""
        if key not in KNOWN_KEYS:
            raise KeyError(
                f"{key!r} is not a run-configuration key. Known keys: {sorted(KNOWN_KEYS)}"
            )
        value = getattr(self, key)
        return value.as_dict() if isinstance(value, Section) else copy.deepcopy(value)

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
    """The JSON object of a run-configuration file, unchecked.

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
