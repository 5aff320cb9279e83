"""The backbone registry: one `BackboneSpec` per name, looked up by `get` and `split_points`."""

import dataclasses
from collections.abc import Callable, Mapping

from keras_dml.utils.registry import Registry
from keras_dml.utils.suggestions import did_you_mean_keys


@dataclasses.dataclass(frozen=True)
class BackboneSpec:
    """What keras-dml knows about one backbone.

    Args:
        name: str. Registry name, also the name of the built `keras.Model`.
        build: callable `(images, imagenet, **options) -> tensor`. Normalised input to last 4-D
            feature map; raises a clear error when it cannot provide ImageNet weights.
        normalization: dict, or callable `(**options) -> dict`. `ImageNormalization` arguments.
        split_points: mapping, or callable `(**options) -> mapping`. Split-point name to layer
            name; must contain `"features"` (the final feature map).
        options: dict. Default value of every build option `get(**kwargs)` accepts.
        min_size: int. Smallest spatial input size. Defaults to `32`.
        channels: int or None. Required input channel count (None: any). Defaults to `3`.
        description: str. One line for `list_backbones(verbose=True)`.
        converted_imagenet: bool, or callable `(**options) -> bool`. Whether `weights="imagenet"`
            means a converted file rather than a download by the builder. Defaults to `False`.
    """

    name: str
    build: Callable
    normalization: Mapping
    split_points: Mapping | Callable
    options: Mapping = dataclasses.field(default_factory=dict)
    min_size: int = 32
    channels: int | None = 3
    description: str = ""
    converted_imagenet: bool | Callable = False

    def resolve_normalization(self, **options):
        """Returns the `ImageNormalization` arguments for these build options."""
        if callable(self.normalization):
            return dict(self.normalization(**{**self.options, **options}))
        return dict(self.normalization)

    def uses_converted_imagenet(self, **options):
        """Whether ImageNet weights for these build options come from a converted file."""
        if callable(self.converted_imagenet):
            return bool(self.converted_imagenet(**{**self.options, **options}))
        return bool(self.converted_imagenet)

    def resolve_split_points(self, **options):
        """Returns the split-point dict for these build options (defaults filled in)."""
        if callable(self.split_points):
            return dict(self.split_points(**{**self.options, **options}))
        return dict(self.split_points)


BACKBONES = Registry("backbone")


def register_backbone(spec):
    """Adds a backbone to the registry.

    Args:
        spec: `BackboneSpec`. Its `name` must not be registered yet.

    Returns:
        The spec.

    Raises:
        ValueError: the name is taken or the spec has no `"features"` split point.
    """
    if "features" not in spec.resolve_split_points():
        raise ValueError(
            f"Backbone {spec.name!r} must define a 'features' split point. "
            f"Received: split_points={spec.resolve_split_points()}"
        )
    return BACKBONES.register(spec.name, spec, description=spec.description)


def get_spec(name):
    """Returns the `BackboneSpec` registered under `name` (`ValueError` naming the known ones)."""
    return BACKBONES.get(name)


def list_backbones(verbose=False):
    """Names of the registered backbones, or `{name: description}` when `verbose`.

    Examples:
    >>> "googlenet" in list_backbones()
    True
    """
    return BACKBONES.describe() if verbose else BACKBONES.names()


def split_points(name, **options):
    """Named split points of a backbone: split-point name -> layer name in the built model.

    Args:
        name: str. A registered backbone name.
        **options: build options that change layer names (GoogLeNet's `lrn`).

    Returns:
        dict str -> str, in network order.

    Raises:
        ValueError: an unknown backbone or option.

    Examples:
    >>> split_points("googlenet")["pool3"]
    'pool3'
    >>> split_points("resnet50")["conv4"]
    'conv4_block6_out'

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018 (Sec. 4:
        S = input..pool3, attention trunk inception_4a..4e, G = the rest).
    """
    spec = get_spec(name)
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        raise ValueError(
            f"Backbone {name!r} has no option(s) {unknown}."
            f"{did_you_mean_keys(unknown, spec.options)} Its options: "
            f"{sorted(spec.options) or 'none'}."
        )
    return spec.resolve_split_points(**options)
