"""What a converted weights file was made for (backbone, options, source), kept inside the file."""

import json

ATTRIBUTE = "keras_dml_conversion"


def write_weights_metadata(path, backbone, options, source, source_file=None):
    """Records in a `.weights.h5` file the backbone, options and source it was converted for.

    Args:
        path: str. A weights file written by `model.save_weights`.
        backbone: str. Registry name, e.g. `"resnet50"`.
        options: dict. Build options of `get`, e.g. `{"variant": "v1.5"}`.
        source: str. Where the weights come from, e.g. `"torchvision"`.
        source_file: dict or None. `source_file_record` of the converted file. Defaults to `None`.
    """
    import h5py

    record = {
        "backbone": backbone,
        "options": dict(options),
        "source": source,
        "source_file": None if source_file is None else dict(source_file),
    }
    with h5py.File(path, "a") as handle:
        handle.attrs[ATTRIBUTE] = json.dumps(record, sort_keys=True)


def read_weights_metadata(path):
    """The record (`backbone`, `options`, `source`, `source_file`) of a weights file, or `None`."""
    import h5py

    try:
        with h5py.File(path, "r") as handle:
            raw = handle.attrs.get(ATTRIBUTE)
    except OSError:
        return None
    if raw is None:
        return None
    return json.loads(raw.decode() if isinstance(raw, bytes) else raw)


def options_from_weights(name, path, record, options):
    """Build options for `get(name, weights=path, **options)`: the file's, unless contradicted.

    Raises:
        ValueError: the file was converted for another backbone or with other options.
    """
    if record["backbone"] != name:
        raise ValueError(
            f"The weights file {path!r} was converted for backbone {record['backbone']!r}, "
            f"not {name!r}: call keras_dml.backbones.get({record['backbone']!r}, weights=...)."
        )
    merged = dict(options)
    for key, value in record["options"].items():
        if key in merged and merged[key] != value:
            raise ValueError(
                f"The weights file {path!r} was converted for {name!r} with {key}={value!r}, "
                f"but {key}={merged[key]!r} was requested: drop the argument or pass {value!r}."
            )
        merged[key] = value
    return merged
