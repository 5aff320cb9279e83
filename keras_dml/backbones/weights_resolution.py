"""Which weights file `keras_dml.backbones.get` loads, found and checked before building."""

from collections.abc import Mapping

from keras_dml.backbones.expected_source import ExpectedSource
from keras_dml.backbones.imagenet_lookup import find_imagenet_weights
from keras_dml.backbones.registry import get_spec
from keras_dml.backbones.weights import check_weights_argument
from keras_dml.backbones.weights_metadata import options_from_weights, read_weights_metadata

# Keys of a run configuration's `backbone` entry that are `get` arguments, not build options.
GET_ARGUMENTS = ("name", "weights", "freeze_batchnorm", "batchnorm_momentum", "input_shape")


def resolve_weights(name, weights, options):
    """The weights `get(name, weights, **options)` loads, and the options it builds with.

    Args:
        name: str. A registered backbone name.
        weights: None, `"imagenet"`, a weights file path, or a recipe's `weights` object.
        options: dict. The build options passed to `get`.

    Returns:
        `(weights, options)`: `None`, `"imagenet"` (a Keras download) or the file to load, and the
        options completed with those the file was converted for.

    Raises:
        ValueError: an invalid `weights`, or a file converted for another variant.
        FileNotFoundError: a path that does not exist.
        WeightsUnavailableError: converted weights missing, corrupted or from another source file.

    Examples:
    >>> resolve_weights("convnet", None, {})
    (None, {})
    """
    spec = get_spec(name)
    expected = None
    if isinstance(weights, Mapping):
        expected = ExpectedSource.from_entry(weights)
        if not spec.uses_converted_imagenet(**options):
            raise ValueError(
                f"Backbone {name!r} with options {options} takes Keras' own ImageNet download, "
                f"whose source cannot be checked: use weights='imagenet', or a variant keras-dml "
                f"converts (see `keras-dml backbones convert --help`). Received: weights="
                f"{dict(weights)}"
            )
        weights = "imagenet"
    weights = check_weights_argument(weights)
    if weights == "imagenet" and spec.uses_converted_imagenet(**options):
        weights = find_imagenet_weights(name, {**spec.options, **options}, expected)
    if weights not in (None, "imagenet"):
        record = read_weights_metadata(weights)
        if record is not None:
            options = options_from_weights(name, weights, record, options)
    return weights, dict(options)


def check_backbone_weights(entry):
    """Finds and checks the weights of a run configuration's `backbone` entry, building nothing.

    Args:
        entry: dict. The `backbone` entry: `name`, `weights` and the other `get` arguments.

    Returns:
        The path of the weights file the run will load, or `None`.

    Raises:
        ValueError: as `resolve_weights`.
        FileNotFoundError: a path that does not exist.
        WeightsUnavailableError: as `resolve_weights`, with the `keras-dml backbones convert` line.

    Examples:
    >>> check_backbone_weights({"name": "convnet", "weights": None}) is None
    True
    """
    options = {key: value for key, value in entry.items() if key not in GET_ARGUMENTS}
    weights, _ = resolve_weights(entry.get("name"), entry.get("weights"), options)
    return None if weights in (None, "imagenet") else weights
