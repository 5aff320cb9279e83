"""What a converted weights file was made for: backbone, build options and source.

The record is a JSON attribute on the root of the `.weights.h5` file itself rather than a
sidecar file: it travels with the file (copies, mirrors, the cache), the file's sha256 covers
it, and Keras ignores root attributes it does not know when it loads the weights.
"""

import json

ATTRIBUTE = "keras_dml_conversion"


def write_weights_metadata(path, backbone, options, source, source_file=None):
    """Records in a `.weights.h5` file the backbone and options it was converted for, and from
    which file.

    Args:
        path: str. A weights file written by `model.save_weights`.
        backbone: str. Registry name, e.g. `"resnet50"`.
        options: dict. Build options of `keras_dml.backbones.get`, e.g. `{"variant": "v1.5"}`.
        source: str. Where the weights come from, e.g. `"torchvision"`.
        source_file: dict or None. The converted file's `name`, `sha256` and `sha1`
            (`keras_dml.backbones.expected_source.source_file_record`), which a recipe's
            `weights` object checks; None when the weights came from memory. Defaults to
            `None`.

    Examples:
    >>> options = {"variant": "v1.5"}
    >>> write_weights_metadata("r.weights.h5", "resnet50", options, "torchvision")  # doctest: +SKIP
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
    """Returns the conversion record of a weights file, or `None` when it has none.

    Args:
        path: str. A weights file (HDF5); files without the record (plain `save_weights`
            output, Keras 2 `.h5` downloads) return `None`.

    Returns:
        dict with `"backbone"`, `"options"`, `"source"` and `"source_file"` (missing in files
        converted before keras-dml recorded it), or `None`.

    Examples:
    >>> read_weights_metadata("r.weights.h5")["options"]  # doctest: +SKIP
    {'variant': 'v1.5'}
    """
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

    Args:
        name: str. The backbone requested.
        path: str. The weights file (for messages).
        record: dict from `read_weights_metadata`.
        options: dict. The options the caller passed.

    Returns:
        dict: `options` completed with the options the file was converted for.

    Raises:
        ValueError: when the file was converted for another backbone or an option the caller
            passed differs from the file's.
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
