"""The model-card schema (`model_zoo/README.md`) and its validation."""

import math
import re
from pathlib import PurePosixPath
from urllib.parse import urlparse

from keras_dml.zoo.errors import CardValidationError

SCHEMA_VERSION = 1
STATUSES = ("published", "not published")
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.\-]{0,127}$")
SHA256_PATTERN = re.compile(r"^[0-9a-f]{64}$")

_TOP_LEVEL_REQUIRED = (
    "schema_version",
    "name",
    "status",
    "method",
    "backbone",
    "preprocessing",
    "training",
    "license",
)
_TOP_LEVEL_OPTIONAL = (
    "description",
    "embedding_dim",
    "model",
    "metrics",
    "files",
    "references",
    "tags",
    "notes",
)
_FILE_KEYS = ("filename", "url", "sha256", "size", "path")
_METRICS_REQUIRED = ("dataset", "split", "command", "values")


def _fail(source, field_name, problem):
    raise CardValidationError(source, field_name, problem)


def _require_str(value, source, field_name):
    if not isinstance(value, str) or not value.strip():
        _fail(source, field_name, f"must be a non-empty string. Received: {value!r}")


def _require_dict(value, source, field_name):
    if not isinstance(value, dict):
        _fail(source, field_name, f"must be a JSON object. Received: {value!r}")


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_relative_path(value, source, field_name):
    _require_str(value, source, field_name)
    posix = PurePosixPath(value.replace("\\", "/"))
    if posix.is_absolute() or ":" in posix.parts[0] or ".." in posix.parts:
        _fail(
            source,
            field_name,
            "must be a path relative to the card's folder without '..' "
            f"(e.g. 'files/model.keras'). Received: {value!r}",
        )


def _check_file_entry(entry, index, status, source):
    where = f"files[{index}]"
    _require_dict(entry, source, where)
    unknown = sorted(set(entry) - set(_FILE_KEYS))
    if unknown:
        _fail(source, f"{where}.{unknown[0]}", f"is not a known file key; use {list(_FILE_KEYS)}")
    for key in ("filename", "sha256", "size"):
        if key not in entry:
            _fail(source, f"{where}.{key}", "is missing")
    name = entry["filename"]
    _require_str(name, source, f"{where}.filename")
    if name in (".", "..") or "/" in name or "\\" in name or name != name.strip():
        _fail(source, f"{where}.filename", f"must be a plain file name. Received: {name!r}")
    sha = entry["sha256"]
    if not isinstance(sha, str) or not SHA256_PATTERN.match(sha):
        _fail(source, f"{where}.sha256", f"must be 64 lowercase hex digits. Received: {sha!r}")
    if not _is_int(entry["size"]) or entry["size"] < 0:
        _fail(source, f"{where}.size", f"must be a byte count >= 0. Received: {entry['size']!r}")
    if "url" in entry:
        url = entry["url"]
        if status != "published":
            _fail(source, f"{where}.url", "must be absent: the card's status is 'not published'")
        parsed = urlparse(url) if isinstance(url, str) else None
        if parsed is None or parsed.scheme not in ("http", "https") or not parsed.netloc:
            _fail(source, f"{where}.url", f"must be an http(s) URL. Received: {url!r}")
    if "path" in entry:
        _check_relative_path(entry["path"], source, f"{where}.path")
    if status == "published" and "url" not in entry and "path" not in entry:
        _fail(source, f"{where}.url", "is missing: a published file needs a 'url' or a 'path'")


def _check_config_file(config, file_names, source):
    if not config.endswith(".json") or config not in file_names:
        _fail(
            source,
            "model.config",
            "must be a serialized Keras object or the name of a '.json' file listed in 'files'. "
            f"Received: {config!r}",
        )


def _check_model(model, file_names, source):
    _require_dict(model, source, "model")
    if "file" in model:
        if set(model) - {"file"}:
            _fail(source, "model", "takes either {'file'} or {'config', 'weights'}, not both")
        reference, suffix, key = model["file"], ".keras", "model.file"
    elif "config" in model or "weights" in model:
        if set(model) != {"config", "weights"}:
            _fail(source, "model", "with weights-only loading needs exactly 'config' and 'weights'")
        if isinstance(model["config"], str):  # A listed JSON file holds it (hub presets).
            _check_config_file(model["config"], file_names, source)
        else:
            _require_dict(model["config"], source, "model.config")
            if "class_name" not in model["config"]:
                _fail(
                    source,
                    "model.config",
                    "must be a serialized Keras object "
                    "(keras.saving.serialize_keras_object(model)) with a 'class_name'",
                )
        reference, suffix, key = model["weights"], ".weights.h5", "model.weights"
    else:
        _fail(source, "model", "needs 'file' (a .keras archive) or 'config' + 'weights'")
    _require_str(reference, source, key)
    if not reference.endswith(suffix):
        _fail(source, key, f"must name a '{suffix}' file. Received: {reference!r}")
    if reference not in file_names:
        _fail(source, key, f"names '{reference}', which is not listed in 'files'")


def _check_metrics(metrics, source):
    _require_dict(metrics, source, "metrics")
    for key in _METRICS_REQUIRED:
        if key not in metrics:
            _fail(source, f"metrics.{key}", "is missing (metrics need dataset, split, command)")
    for key in ("dataset", "split", "command"):
        _require_str(metrics[key], source, f"metrics.{key}")
    values = metrics["values"]
    _require_dict(values, source, "metrics.values")
    if not values:
        _fail(source, "metrics.values", "is empty: a published card reports measured metrics")
    for metric, value in values.items():
        if not _is_number(value):
            _fail(source, f"metrics.values.{metric}", f"must be a number. Received: {value!r}")


def validate_card(data, source="<card>"):
    """Returns `data`, a parsed card, after checking it against the schema.

    Raises:
        CardValidationError: naming `source` and the first bad field.
    """
    _require_dict(data, source, "<root>")
    for key in _TOP_LEVEL_REQUIRED:
        if key not in data:
            _fail(source, key, "is missing")
    unknown = sorted(set(data) - set(_TOP_LEVEL_REQUIRED) - set(_TOP_LEVEL_OPTIONAL))
    if unknown:
        known = sorted(_TOP_LEVEL_REQUIRED + _TOP_LEVEL_OPTIONAL)
        _fail(source, unknown[0], f"is not a known card field; known fields: {known}")
    if data["schema_version"] != SCHEMA_VERSION:
        _fail(
            source,
            "schema_version",
            f"must be {SCHEMA_VERSION} (this keras-dml reads schema {SCHEMA_VERSION}). "
            f"Received: {data['schema_version']!r}",
        )
    name = data["name"]
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        _fail(
            source,
            "name",
            "must be lowercase letters, digits, '_', '-', '.' starting with a letter or "
            f"digit (at most 128 characters). Received: {name!r}",
        )
    status = data["status"]
    if status not in STATUSES:
        _fail(source, "status", f"must be one of {list(STATUSES)}. Received: {status!r}")
    for key in ("method", "backbone", "license"):
        _require_str(data[key], source, key)
    if "embedding_dim" in data and (
        not _is_int(data["embedding_dim"]) or data["embedding_dim"] < 1
    ):
        _fail(source, "embedding_dim", f"must be an int >= 1. Received: {data['embedding_dim']!r}")

    prep = data["preprocessing"]
    _require_dict(prep, source, "preprocessing")
    size = prep.get("input_size")
    if not (isinstance(size, list) and len(size) == 2 and all(_is_int(v) and v > 0 for v in size)):
        _fail(source, "preprocessing.input_size", f"must be [height, width]. Received: {size!r}")
    pixel_range = prep.get("pixel_range")
    if not (
        isinstance(pixel_range, list)
        and len(pixel_range) == 2
        and all(_is_number(v) for v in pixel_range)
        and pixel_range[0] < pixel_range[1]
    ):
        _fail(
            source,
            "preprocessing.pixel_range",
            f"must be [low, high] with low < high, e.g. [0, 255]. Received: {pixel_range!r}",
        )

    training = data["training"]
    _require_dict(training, source, "training")
    for key in ("dataset", "protocol"):
        if key not in training:
            _fail(source, f"training.{key}", "is missing")
        _require_str(training[key], source, f"training.{key}")
    if "recipe" in training:
        _check_relative_path(training["recipe"], source, "training.recipe")
    elif status == "not published":
        _fail(source, "training.recipe", "is missing: a 'not published' card names its recipe")

    files = data.get("files", [])
    if not isinstance(files, list):
        _fail(source, "files", f"must be a list of file entries. Received: {files!r}")
    for index, entry in enumerate(files):
        _check_file_entry(entry, index, status, source)
    names = [entry["filename"] for entry in files]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        _fail(source, "files", f"lists '{duplicates[0]}' more than once")

    if status == "published":
        if "model" not in data:
            _fail(source, "model", "is missing: a published card says which file to load")
        if "metrics" not in data:
            _fail(source, "metrics", "is missing: a published card reports measured metrics")
    if "model" in data:
        _check_model(data["model"], set(names), source)
    if data.get("metrics") is not None:
        _check_metrics(data["metrics"], source)
    elif "metrics" in data and status == "published":
        _fail(source, "metrics", "must not be null on a published card")
    for key in ("references", "tags"):
        if key in data and not (
            isinstance(data[key], list) and all(isinstance(v, str) for v in data[key])
        ):
            _fail(source, key, f"must be a list of strings. Received: {data[key]!r}")
    return data
