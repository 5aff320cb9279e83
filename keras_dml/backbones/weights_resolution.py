"""Which weights file `keras_dml.backbones.get` loads, found and checked before anything is built.

`resolve_weights` turns the `weights` argument (None, `"imagenet"`, a path, or a recipe's
`weights` object naming the expected source file, `keras_dml.backbones.expected_source`) into
the file to load and the build options that file requires. `check_backbone_weights` does the
same for a run configuration's `backbone` entry, so a run can stop with the one-line
`keras-dml backbones convert` instruction before it loads any data.
"""

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
        weights: None, `"imagenet"`, a weights file path, or a `weights` object
            (`{"pretrained": "imagenet", "source_file": ..., "source_sha256" / "source_sha1":
            ...}`) for converted ImageNet weights that must come from that published file.
        options: dict. The backbone's build options passed to `get`.

    Returns:
        `(weights, options)`: `None`, `"imagenet"` (a Keras download by the builder) or the
        path of the file to load; the options completed with those the file was converted for.

    Raises:
        ValueError: an invalid `weights` value, a `weights` object for a backbone whose
            ImageNet weights are a Keras download, or a file converted for another variant.
        FileNotFoundError: a path that does not exist.
        WeightsUnavailableError: converted weights not found (one line with the `keras-dml
            backbones convert` command), corrupted, or converted from another source file.

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

    Call it before loading data: a recipe whose converted ImageNet weights are missing stops
    at once with the one-line `keras-dml backbones convert` instruction.

    Args:
        entry: dict. The `backbone` entry: `name`, `weights`, and `keras_dml.backbones.get`
            arguments and build options.

    Returns:
        str path of the weights file the run will load, or `None` (random initialisation or a
        Keras download by the builder).

    Raises:
        ValueError: an invalid `weights` value or a file converted for another variant (as
            `resolve_weights`).
        FileNotFoundError: a path that does not exist.
        WeightsUnavailableError: converted weights not found (one line with the `keras-dml
            backbones convert` command), corrupted, or converted from another source file.

    Examples:
    >>> check_backbone_weights({"name": "convnet", "weights": None}) is None
    True
    """
    options = {key: value for key, value in entry.items() if key not in GET_ARGUMENTS}
    weights, _ = resolve_weights(entry.get("name"), entry.get("weights"), options)
    return None if weights in (None, "imagenet") else weights
