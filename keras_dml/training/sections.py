"""The typed, frozen sections of a run configuration, read by attribute or as a mapping."""

import collections.abc
import copy
import dataclasses
import types


def _frozen(mapping):
    return types.MappingProxyType(copy.deepcopy(dict(mapping or {})))


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Section(collections.abc.Mapping):
    """A run-configuration entry: its named fields, and its other keys in `arguments`."""

    arguments: collections.abc.Mapping = dataclasses.field(default_factory=dict)

    # Fields left out of the mapping while they are `None`.
    OPTIONAL = ()

    @classmethod
    def from_entry(cls, entry):
        """The section of a configuration entry (a dict)."""
        named = {field.name for field in dataclasses.fields(cls)} - {"arguments"}
        entry = dict(entry or {})
        values = {key: copy.deepcopy(entry.pop(key)) for key in named if key in entry}
        return cls(arguments=_frozen(entry), **values)

    def as_dict(self):
        """The entry as `config.json` holds it (a new dict)."""
        values = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name != "arguments" and not (field.name in self.OPTIONAL and value is None):
                values[field.name] = value
        return copy.deepcopy({**values, **self.arguments})

    def __getitem__(self, key):
        return self.as_dict()[key]

    def __iter__(self):
        return iter(self.as_dict())

    def __len__(self):
        return len(self.as_dict())

    def __eq__(self, other):
        return isinstance(other, collections.abc.Mapping) and self.as_dict() == dict(other)

    __hash__ = None

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        return f"{type(self).__name__}({self.as_dict()})"


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class BackboneSection(Section):
    """`backbone`: `name`, `weights`, `freeze_batchnorm`; the backbone's options in `arguments`."""

    name: str = "vgg_small"
    weights: object = None
    freeze_batchnorm: bool = False


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class OptimizerSection(Section):
    """`optimizer`: `name`, `learning_rate`, `lr_multipliers`; other arguments in `arguments`."""

    name: str = "adam"
    learning_rate: float = 1e-3
    lr_multipliers: collections.abc.Mapping = None

    OPTIONAL = ("lr_multipliers",)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class LossSection(Section):
    """`loss`: a registered loss name and its arguments."""

    name: str = None


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ModelSection(Section):
    """`model`: the keyword arguments of the method's model class (all in `arguments`)."""


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class MethodOptionsSection(Section):
    """`method_options`: the method's own options (its `MethodSpec.options` fields)."""


SECTIONS = {
    "backbone": BackboneSection,
    "model": ModelSection,
    "loss": LossSection,
    "optimizer": OptimizerSection,
    "method_options": MethodOptionsSection,
}
