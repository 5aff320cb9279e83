"""`publish_run`: a training run folder -> a card plus files ready to upload."""

import json
import re
import shutil
import zipfile
from pathlib import Path

from keras_dml.zoo.errors import CardValidationError
from keras_dml.zoo.preset import build_card, describe_file, normalize_metrics, write_json_atomic
from keras_dml.zoo.schema import NAME_PATTERN

# Official evaluation protocols (see the design notes), keyed by dataset name.
DEFAULT_PROTOCOLS = {
    "cub200": "CUB-200-2011: first 100 classes train, last 100 classes test",
    "cars196": "Cars196: first 98 classes train, last 98 classes test",
    "sop": "Stanford Online Products: Ebay_train / Ebay_test",
    "inshop": "In-shop Clothes Retrieval: train split; query vs gallery test",
    "vehicleid": "VehicleID: 13,164 training identities; small/medium/large test sets",
    "digits": "scikit-learn digits, 32 px RGB: digits 0-5 train (2 held out for validation), "
    "6-9 test (unseen classes)",
    "fashion_mnist": "Fashion-MNIST, all 70,000 images pooled, 32 px RGB: classes 0-5 train "
    "(2 held out for validation), 6-9 test (unseen classes)",
}


def _find(config, *keys):
    """Returns the first value of any of `keys` at the top level or one level down."""
    for key in keys:
        if key in config:
            return config[key]
    for value in config.values():
        if isinstance(value, dict):
            for key in keys:
                if key in value:
                    return value[key]
    return None


def _name_of(value):
    """Returns `value["name"]` for a `{"name": ..., ...}` block (training configs), else value."""
    return value.get("name") if isinstance(value, dict) else value


def _read_json(path, what):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"Cannot read {what} {path}: {error}") from error


def _keras_input_size(model_path):
    """Reads `[H, W, C]` from the InputLayer in a .keras archive's config (no code runs)."""
    with zipfile.ZipFile(model_path) as archive:
        config = json.loads(archive.read("config.json"))
    stack = [config]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("class_name") == "InputLayer":
                shape = node.get("config", {}).get("batch_shape")
                if shape and len(shape) == 4 and all(isinstance(v, int) for v in shape[1:]):
                    return list(shape[1:])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def _default_name(run_dir):
    name = re.sub(r"[^a-z0-9_.\-]+", "_", run_dir.resolve().name.lower()).strip("_.-")
    return name or "model"


def run_card_fields(
    run_dir,
    name=None,
    method=None,
    backbone=None,
    dataset=None,
    protocol=None,
    recipe=None,
    metrics_command=None,
    license="Apache-2.0",
    input_size=None,
    model_file="model.keras",
):
    """The card of a training run, less its files: `(name, fields, model_path)`.

    Args:
        run_dir: str or path. Training run with `model.keras` and `metrics.json`.
        name, method, backbone, dataset, protocol, recipe, metrics_command, license, input_size,
            model_file: see `publish_run`.

    Returns:
        `(name, fields, model_path)`: `fields` are `build_card`'s keyword arguments.

    Raises:
        FileNotFoundError: `model.keras` or `metrics.json` is missing.
    """
    run_dir = Path(run_dir)
    model_path = run_dir / model_file
    metrics_path = run_dir / "metrics.json"
    for required in (model_path, metrics_path):
        if not required.is_file():
            raise FileNotFoundError(
                f"{required} is missing; a run directory needs the model ({model_file}, "
                "choose another with --model-file) and metrics.json."
            )
    config_path = run_dir / "config.json"
    config = _read_json(config_path, "run config") if config_path.is_file() else {}
    metrics_raw = _read_json(metrics_path, "metrics")
    if not isinstance(config, dict) or not isinstance(metrics_raw, dict):
        raise ValueError(f"{config_path} and {metrics_path} must each hold a JSON object.")

    name = name or config.get("name") or _default_name(run_dir)
    if not NAME_PATTERN.match(str(name)):
        raise CardValidationError(
            "<publish>", "name", f"must be lowercase letters, digits, '_-.'. Received: {name!r}"
        )
    dataset = dataset or _find(config, "dataset", "dataset_name")
    training = {
        "dataset": dataset,
        "protocol": protocol or _find(config, "protocol") or DEFAULT_PROTOCOLS.get(dataset),
    }
    for key, value in (
        ("recipe", recipe or _find(config, "recipe")),
        ("command", _find(config, "command")),
        ("epochs", _find(config, "epochs")),
        ("seed", _find(config, "seed")),
        ("batch_size", _find(config, "batch_size")),
    ):
        if value is not None:
            training[key] = value
    training = {key: value for key, value in training.items() if value is not None}

    shape = _keras_input_size(model_path)
    size = input_size or (shape[:2] if shape else None) or _find(config, "image_size")
    if isinstance(size, int):
        size = [size, size]
    preprocessing = {
        "input_size": list(size) if size else None,
        "pixel_range": [0, 255],
        "channels": shape[2] if shape else 3,
    }
    metrics = normalize_metrics(metrics_raw, dataset=dataset, command=metrics_command)
    fields = dict(
        method=method or _find(config, "method"),
        backbone=backbone or _name_of(_find(config, "backbone")),
        preprocessing=preprocessing,
        training=training,
        metrics=metrics,
        license=license,
    )
    description = _find(config, "description")
    if isinstance(description, str) and description:
        fields["description"] = description
    embedding_dim = _find(config, "embedding_dim")
    if isinstance(embedding_dim, int):
        fields["embedding_dim"] = embedding_dim
    return name, fields, model_path


def publish_run(
    run_dir,
    output,
    name=None,
    base_url=None,
    method=None,
    backbone=None,
    dataset=None,
    protocol=None,
    recipe=None,
    metrics_command=None,
    license="Apache-2.0",
    input_size=None,
    model_file="model.keras",
    overwrite=False,
):
    """Writes `<output>/<name>.json` and `<output>/files/<name>/model.keras` from a run.

    Args:
        run_dir: str or path. Training run with `model.keras` and `metrics.json`.
        output: str or path. Where the card and `files/` go (e.g. `model_zoo/`).
        name: str or None. Model name. Defaults to `config.json`'s `name` or the folder name.
        base_url: str or None. Upload location, for each file's `url`.
        method, backbone, dataset, protocol, recipe: str or None. Override `config.json`.
        metrics_command: str or None. The command that measured the metrics.
        license: str. Licence of the weights. Defaults to `"Apache-2.0"`.
        input_size: sequence of int or None. `[H, W]`. Defaults to the model's input.
        model_file: str. The `.keras` file the metrics were measured on. Defaults to
            `"model.keras"`.
        overwrite: bool. Replace an existing card and files. Defaults to `False`.

    Returns:
        `pathlib.Path` of the written card.

    Raises:
        FileNotFoundError: `model.keras` or `metrics.json` is missing.
        CardValidationError: the resulting card is invalid (names the field to supply).
    """
    name, fields, model_path = run_card_fields(
        run_dir,
        name=name,
        method=method,
        backbone=backbone,
        dataset=dataset,
        protocol=protocol,
        recipe=recipe,
        metrics_command=metrics_command,
        license=license,
        input_size=input_size,
        model_file=model_file,
    )
    output = Path(output)
    card_path = output / f"{name}.json"
    target = output / "files" / name / "model.keras"
    if (card_path.exists() or target.exists()) and not overwrite:
        raise FileExistsError(f"{card_path} or {target} exists; pass --overwrite to replace.")
    fields = dict(model={"file": "model.keras"}, **fields)
    unhashed_files = [{"filename": "model.keras", "sha256": "0" * 64, "size": 0, "path": "x"}]
    build_card(name, unhashed_files, **fields)  # Fail on a missing field before copying files.
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(model_path, target)
    files = [describe_file(target, output, base_url=base_url, name=name)]
    return write_json_atomic(build_card(name, files, **fields), card_path)
