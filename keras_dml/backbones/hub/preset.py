"""Reading a keras-hub preset: its files, its image converter's scale and offset, its backbone."""

import functools
import json
import os

from keras_dml.backbones.weights import WeightsUnavailableError
from keras_dml.utils.imports import optional_import

HANDLE_FORMS = "a local preset folder, a keras-hub preset name, or a kaggle:// or hf:// handle"


def import_keras_hub():
    """`keras_hub`, or a `MissingDependencyError` naming the `hub` extra."""
    return optional_import("keras_hub", "keras-hub backbones")


def is_local(preset):
    return os.path.isdir(os.path.expanduser(str(preset)))


def unavailable(preset, error):
    """The one-line error of a preset that could not be read."""
    reason = (str(error).strip().splitlines() or [""])[0]
    if is_local(preset):
        return ValueError(f"Cannot load the keras-hub preset folder {preset!r}: {reason}")
    return WeightsUnavailableError(
        f"Cannot load the keras-hub preset {preset!r} ({type(error).__name__}: {reason}). "
        "Offline, save it on a machine with network access "
        "(keras_hub.models.Backbone.from_preset(PRESET).save_to_preset(FOLDER), and the same for "
        "its keras_hub.layers.ImageConverter) and pass the folder."
    )


@functools.lru_cache(maxsize=64)
def _hub_file(preset, filename):
    """The local path of a preset file (keras-hub's download and cache for handles), or None."""
    if is_local(preset):
        path = os.path.join(os.path.expanduser(preset), filename)
        return path if os.path.isfile(path) else None
    import_keras_hub()
    from keras_hub.src.utils.preset_utils import check_file_exists, get_file

    try:
        return get_file(preset, filename) if check_file_exists(preset, filename) else None
    except Exception as error:
        raise unavailable(preset, error) from error


def preset_json(preset, filename):
    """A JSON file of a preset as a dict, or None when the preset has no such file."""
    path = _hub_file(str(preset), filename)
    if path is None:
        return None
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def _as_list(value):
    return [float(v) for v in value] if isinstance(value, list | tuple) else [float(value)]


def converter_settings(preset):
    """`(scale, offset, image_size)` of the preset's image converter (`None` for each missing)."""
    config = (preset_json(preset, "image_converter.json") or {}).get("config", {})
    return config.get("scale"), config.get("offset"), config.get("image_size")


def normalization_of(scale, offset):
    """`ImageNormalization` arguments equal to keras-hub's `x * scale + offset` on [0, 255].

    Examples:
    >>> normalization_of(1 / 255.0, None)
    {'mode': 'custom', 'mean': [0.0], 'std': [255.0]}
    >>> normalization_of(None, None)
    {'mode': 'none'}
    """
    if scale is None and offset is None:
        return {"mode": "none"}
    scale = [1.0] if scale is None else _as_list(scale)
    offset = [0.0] if offset is None else _as_list(offset)
    count = max(len(scale), len(offset))
    scale = scale * count if len(scale) == 1 else scale
    offset = offset * count if len(offset) == 1 else offset
    # x * scale + offset == (x - mean) / std with std = 1 / scale and mean = -offset / scale.
    return {
        "mode": "custom",
        "mean": [-o / s for o, s in zip(offset, scale)],
        "std": [1.0 / s for s in scale],
    }


def load_backbone(preset, load_weights, image_shape=None):
    """The keras-hub `Backbone` of a preset, with or without its weights.

    Args:
        preset: str. See `HANDLE_FORMS`.
        load_weights: bool. Load the preset's weights (random initialisation otherwise).
        image_shape: tuple or `None`. Input shape replacing the preset's. Defaults to `None`.

    Returns:
        `keras_hub.models.Backbone`.

    Raises:
        MissingDependencyError: keras-hub is not installed.
        WeightsUnavailableError: a hub handle that cannot be downloaded.
        ValueError: a folder that is not a keras-hub backbone preset.
    """
    keras_hub = import_keras_hub()
    overrides = {} if image_shape is None else {"image_shape": tuple(image_shape)}
    try:
        return keras_hub.models.Backbone.from_preset(preset, load_weights=load_weights, **overrides)
    except Exception as error:
        raise unavailable(preset, error) from error
