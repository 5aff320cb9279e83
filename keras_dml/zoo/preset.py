"""Writing presets: a model's files plus a card with their sha256 and size."""

import json
import math
import os
import tempfile
from pathlib import Path
from urllib.parse import quote

from keras_dml.zoo.integrity import sha256_file
from keras_dml.zoo.schema import SCHEMA_VERSION, validate_card

_METRIC_META = ("dataset", "split", "command", "notes", "hardware", "date")
CARD_FILENAME = "card.json"


def describe_file(path, card_dir, base_url=None, name=None):
    """The card entry `{"filename", "sha256", "size", "path"[, "url"]}` of a file.

    `path` is stored relative to `card_dir`; with `base_url` the URL is
    `<base_url>/<name>/<filename>`.
    """
    path = Path(path).resolve()
    entry = {
        "filename": path.name,
        "sha256": sha256_file(path),
        "size": path.stat().st_size,
        "path": Path(os.path.relpath(path, Path(card_dir).resolve())).as_posix(),
    }
    if base_url:
        entry["url"] = f"{base_url.rstrip('/')}/{quote(name)}/{quote(path.name)}"
    return entry


def normalize_metrics(metrics, dataset=None, split="test", command=None):
    """A flat `{"recall@1": 0.61, ...}` dict or a full metrics block in the card's form, or None."""
    if metrics is None:
        return None
    if not isinstance(metrics, dict):
        raise TypeError(f"`metrics` must be a dict. Received: {type(metrics).__name__}")
    block = {key: metrics[key] for key in _METRIC_META if key in metrics}
    if isinstance(metrics.get("values"), dict):
        block["values"] = dict(metrics["values"])
    else:
        block["values"] = {
            key: value
            for key, value in metrics.items()
            if key not in _METRIC_META
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
        }
    for key, default in (("dataset", dataset), ("split", split), ("command", command)):
        if key not in block and default is not None:
            block[key] = default
    return block


def build_card(
    name,
    files,
    model,
    method,
    backbone,
    preprocessing,
    training,
    metrics=None,
    license="Apache-2.0",
    status="published",
    **card_fields,
):
    """Assembles and validates a card dict (schema: `model_zoo/README.md`).

    Args:
        name: str. Model name.
        files: list of dict. File entries (see `describe_file`).
        model: dict. `{"file": "model.keras"}` or `{"config": ..., "weights": ...}`.
        method: str. Method name, e.g. `"divide_and_conquer"`.
        backbone: str. Backbone name, e.g. `"resnet50"`.
        preprocessing: dict. `input_size` `[H, W]` and `pixel_range` `[low, high]`.
        training: dict. At least `dataset` and `protocol`.
        metrics: dict or None. Metrics block (see `normalize_metrics`).
        license: str. Licence of the weights. Defaults to `"Apache-2.0"`.
        status: str. `"published"` or `"not published"`. Defaults to `"published"`.
        **card_fields: optional card fields (`description`, `embedding_dim`, `references`, ...).

    Raises:
        CardValidationError: naming the bad field.
    """
    card = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "status": status,
        "method": method,
        "backbone": backbone,
        **card_fields,
        "model": model,
        "preprocessing": preprocessing,
        "training": training,
        "license": license,
        "files": files,
    }
    if metrics is not None:
        card["metrics"] = metrics
    card = {key: value for key, value in card.items() if value is not None}
    return validate_card(card, source=f"<card '{name}' being written>")


def write_json_atomic(data, path):
    """Writes JSON to `path` through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    return path


def default_preprocessing(model):
    """Returns `{"input_size": [H, W], "pixel_range": [0, 255], "channels": C}` of a model."""
    image_shape = getattr(model, "image_shape", None)  # keras-dml's subclassed models.
    try:
        shape = tuple(image_shape) if image_shape else tuple(model.input_shape)[1:]
    except (AttributeError, TypeError, ValueError):
        shape = ()
    if len(shape) != 3 or not all(isinstance(v, int) for v in shape):
        raise ValueError(
            f"Cannot infer `preprocessing` from the model's input shape {shape or None}; pass "
            "preprocessing={'input_size': [H, W], 'pixel_range': [0, 255]}."
        )
    return {"input_size": [shape[0], shape[1]], "pixel_range": [0, 255], "channels": shape[2]}


def save_preset(
    model,
    directory,
    name,
    method,
    backbone,
    training,
    metrics=None,
    preprocessing=None,
    format="keras",
    base_url=None,
    overwrite=False,
    **card_fields,
):
    """Saves a model as a verified preset: model files plus `card.json` with hashes.

    Args:
        model: `keras.Model`. The model to save.
        directory: str or path. Output folder (created).
        name: str. Model name (lowercase, digits, `_-.`).
        method: str. Method name, e.g. `"bier"`.
        backbone: str. Backbone name, e.g. `"googlenet"`.
        training: dict. At least `dataset` and `protocol`.
        metrics: dict or None. Test metrics, flat or full; a published card needs `command`.
            Defaults to `None`.
        preprocessing: dict or None. Defaults to the model's input size and pixels [0, 255].
        format: str. `"keras"` (`model.keras` and `model.weights.h5`) or `"weights"` (weights
            only, config in the card). Defaults to `"keras"`.
        base_url: str or None. Upload location, for each entry's `url`. Defaults to `None`.
        overwrite: bool. Replace an existing preset. Defaults to `False`.
        **card_fields: other card fields (`license`, `status`, `description`, ...).

    Returns:
        `pathlib.Path` of the written `card.json`.

    Raises:
        FileExistsError: the preset exists and `overwrite` is false.
        CardValidationError: a card field is invalid (checked before writing files).

    Examples:
    >>> from keras_dml import zoo
    >>> zoo.save_preset(model, "presets/bier_cub", name="bier_googlenet_cub200",
    ...                 method="bier", backbone="googlenet",
    ...                 training={"dataset": "cub200", "protocol": "100/100 classes"},
    ...                 )  # doctest: +SKIP
    """
    import keras

    if format not in ("keras", "weights"):
        raise ValueError(f"`format` must be 'keras' or 'weights'. Received: format={format!r}")
    directory = Path(directory)
    card_path = directory / CARD_FILENAME
    if card_path.exists() and not overwrite:
        raise FileExistsError(f"{card_path} exists; pass overwrite=True to replace the preset.")
    preprocessing = preprocessing or default_preprocessing(model)
    metrics = normalize_metrics(metrics, dataset=training.get("dataset"))
    if "embedding_dim" not in card_fields and isinstance(model.output_shape, tuple):
        last = model.output_shape[-1]
        if isinstance(last, int):
            card_fields["embedding_dim"] = last
    if format == "keras":
        model_section = {"file": "model.keras"}
    else:
        model_section = {
            "config": keras.saving.serialize_keras_object(model),
            "weights": "model.weights.h5",
        }
    # Validate everything but the hashes before writing any file.
    unhashed_files = [
        {"filename": f, "sha256": "0" * 64, "size": 0, "path": f}
        for f in (
            ["model.keras", "model.weights.h5"] if format == "keras" else ["model.weights.h5"]
        )
    ]
    build_card(
        name,
        unhashed_files,
        model_section,
        method,
        backbone,
        preprocessing,
        training,
        metrics,
        **card_fields,
    )
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    if format == "keras":
        model.save(directory / "model.keras")
        written.append(directory / "model.keras")
    model.save_weights(directory / "model.weights.h5")
    written.append(directory / "model.weights.h5")
    files = [describe_file(p, directory, base_url=base_url, name=name) for p in written]
    card = build_card(
        name,
        files,
        model_section,
        method,
        backbone,
        preprocessing,
        training,
        metrics,
        **card_fields,
    )
    return write_json_atomic(card, card_path)
