"""Hub presets written: a keras-dml model as a keras-hub style folder, converted, pushed."""

import datetime
import importlib.metadata
import json
import os
import shutil
import tempfile
from pathlib import Path

from keras_dml.utils import optional_import
from keras_dml.zoo.card import ModelCard, read_card
from keras_dml.zoo.hub_loading import (
    CARD_KEY,
    CONFIG_FILE,
    HANDLE_FORMS,
    METADATA_FILE,
    README_FILE,
    TAMPERED_FIX,
    WEIGHTS_FILE,
    fetch_preset_file,
    parse_handle,
    read_hub_card,
)
from keras_dml.zoo.integrity import verify_file
from keras_dml.zoo.loading import load, load_with_card
from keras_dml.zoo.preset import (
    build_card,
    default_preprocessing,
    describe_file,
    normalize_metrics,
    write_json_atomic,
)
from keras_dml.zoo.publish import run_card_fields
from keras_dml.zoo.registry import get_card


def _installed_version(package):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


# Card fields a new preset takes from the card it converts; files and model are its own.
_OWN_FIELDS = ("schema_version", "status", "files", "model")


def _card_fields(card):
    """The fields a new preset takes from `card` (a `ModelCard`, dict, card file or zoo name)."""
    if card is None:
        return {}
    if isinstance(card, str | os.PathLike):
        path = Path(card)
        card = read_card(path) if path.suffix == ".json" and path.is_file() else get_card(str(card))
    data = card.data if isinstance(card, ModelCard) else dict(card)
    return {key: value for key, value in data.items() if key not in _OWN_FIELDS}


def _serialized_config(model):
    import keras

    config = keras.saving.serialize_keras_object(model)
    config.pop("compile_config", None)  # A preset is for inference; keras-hub drops it too.
    return config


def _huggingface_license(license):
    known = {"apache-2.0", "mit", "bsd-3-clause", "cc-by-4.0", "cc-by-nc-4.0", "cc-by-sa-4.0"}
    return license.lower() if license.lower() in known else "other"


def render_readme(card, handle=None):
    """The hub page of a preset (`README.md`): front matter, how to load it, its card's facts."""
    data = card if isinstance(card, dict) else card.data
    where = handle or "PRESET"
    training = data["training"]
    metrics = data.get("metrics") or {}
    height, width = data["preprocessing"]["input_size"]
    lines = [
        "---",
        "library_name: keras",
        f"license: {_huggingface_license(data['license'])}",
        "tags:",
        *(f"- {tag}" for tag in ("keras-dml", "deep-metric-learning", "image-retrieval")),
        "---",
        f"# {data['name']}",
        "",
        data.get("description", f"A keras-dml {data['method']} model."),
        "",
        f"- Method: `{data['method']}`; backbone: `{data['backbone']}`; embedding dimension: "
        f"{data.get('embedding_dim', '-')}.",
        f"- Input: RGB images of {height}x{width} pixels in [0, 255] (normalised inside).",
        f"- Trained on `{training['dataset']}`: {training['protocol']}.",
    ]
    if training.get("recipe"):
        lines.append(f"- Recipe: `{training['recipe']}`.")
    if training.get("command"):
        lines.append(f"- Training command: `{training['command']}`.")
    lines += ["", "## Load", "", "```python", "from keras_dml import zoo", ""]
    lines += [f'model = zoo.load("{where}")', "```", ""]
    lines += [f"or `keras-dml zoo load {where}`: the sha256 of every file is checked first."]
    if handle is None:
        lines.append(f"PRESET is this folder, {HANDLE_FORMS}.")
    lines.append("")
    if metrics.get("values"):
        lines += [f"## Test metrics ({metrics['dataset']}, {metrics['split']})", ""]
        lines += ["| metric | value |", "| --- | --- |"]
        lines += [f"| {key} | {value:.4g} |" for key, value in metrics["values"].items()]
        lines += ["", f"Measured with `{metrics['command']}`.", ""]
    lines += ["## Files", "", "| file | sha256 | bytes |", "| --- | --- | --- |"]
    lines += [f"| {e['filename']} | `{e['sha256']}` | {e['size']} |" for e in data["files"]]
    return "\n".join(lines) + "\n"


def save_hub_preset(model, folder, card=None, handle=None, overwrite=False, **card_fields):
    """Saves a keras-dml model as a hub preset folder that `keras_dml.zoo.load` checks and loads.

    Args:
        model: `keras.Model`, or str or path of a training run folder (`model.keras`,
            `metrics.json`, `config.json`).
        folder: str or path. The preset folder to write.
        card: `ModelCard`, dict, card file, zoo name or None. Card whose name, method, training,
            metrics and other fields describe the model. Defaults to `None`.
        handle: str or None. Where it will be pushed, for the README's load line. Defaults to
            `None`.
        overwrite: bool. Replace an existing preset. Defaults to `False`.
        **card_fields: card fields over `card`'s (`name`, `method`, `backbone`, `training`,
            `metrics`, `license`, ...); for a run folder, `publish_run`'s options.

    Returns:
        `pathlib.Path` of the folder.

    Raises:
        FileExistsError: the folder holds a preset and `overwrite` is false.
        CardValidationError: a card field is missing or invalid (checked before writing).

    Examples:
    >>> from keras_dml import zoo
    >>> zoo.save_hub_preset("runs/dc_digits", "presets/dc_digits",
    ...                     metrics_command="keras-dml evaluate ...")  # doctest: +SKIP
    """
    import keras

    fields = _card_fields(card)
    if isinstance(model, str | os.PathLike):
        name, run_fields, model_path = run_card_fields(model, **card_fields)
        fields.update(run_fields, name=name)
        model = load(model_path)
    else:
        fields.update(card_fields)
    if not isinstance(model, keras.Model):
        raise TypeError(f"`model` must be a keras.Model or a run folder. Received: {model!r}")
    folder = Path(folder)
    written = [folder / name for name in (CONFIG_FILE, WEIGHTS_FILE, METADATA_FILE)]
    if any(path.exists() for path in written) and not overwrite:
        raise FileExistsError(f"{folder} holds a preset; pass overwrite=True to replace it.")
    name = fields.pop("name", None)
    fields["training"] = fields.get("training") or {}
    fields["metrics"] = normalize_metrics(
        fields.get("metrics"), dataset=fields["training"].get("dataset")
    )
    fields["preprocessing"] = fields.get("preprocessing") or default_preprocessing(model)
    try:
        last = model.output_shape[-1] if isinstance(model.output_shape, tuple) else None
    except (AttributeError, ValueError):  # A subclassed model that was never called.
        last = getattr(model, "embedding_dim", None)
    if "embedding_dim" not in fields and isinstance(last, int):
        fields["embedding_dim"] = last
    fields["model"] = {"config": CONFIG_FILE, "weights": WEIGHTS_FILE}
    unhashed = [
        {"filename": f, "sha256": "0" * 64, "size": 0, "path": f}
        for f in (CONFIG_FILE, WEIGHTS_FILE)
    ]
    build_card(name, unhashed, **fields)  # Fail on a missing field before writing files.

    folder.mkdir(parents=True, exist_ok=True)
    (folder / CONFIG_FILE).write_text(json.dumps(_serialized_config(model), indent=4) + "\n")
    model.save_weights(folder / WEIGHTS_FILE)
    files = [describe_file(path, folder) for path in written[:2]]
    data = build_card(name, files, **fields)
    metadata = {
        "keras_version": keras.version(),
        "keras_hub_version": _installed_version("keras-hub"),
        "keras_dml_version": _installed_version("keras-dml"),
        "parameter_count": model.count_params(),
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        CARD_KEY: data,
    }
    write_json_atomic(metadata, folder / METADATA_FILE)
    (folder / README_FILE).write_text(render_readme(data, handle), encoding="utf-8")
    return folder


def convert_zoo_entry(name_or_card, folder, handle=None, overwrite=False):
    """Converts a zoo entry (name or card file) into a hub preset folder; returns the folder.

    The entry's model is loaded through its card (every file checked), and the preset's card
    keeps the entry's fields and notes the sha256 of the file it came from.
    """
    model, card = load_with_card(name_or_card)
    if card is None:
        raise ValueError(f"{name_or_card} has no card; pass a zoo name or a card file.")
    origin = ", ".join(f"{e['filename']} sha256 {e['sha256']}" for e in card.files)
    notes = f"Converted from the zoo entry '{card.name}' ({origin})."
    if card.data.get("notes"):
        notes = f"{card.data['notes']} {notes}"
    return save_hub_preset(
        model, folder, card=card, handle=handle, notes=notes, overwrite=overwrite
    )


def check_hub_preset(folder):
    """Checks a local preset folder against its card (every listed file); returns the card."""
    card = read_hub_card(folder)
    for entry in card.files:
        path = fetch_preset_file(folder, entry["filename"])
        verify_file(path, entry["sha256"], entry["size"], delete=False, fix=TAMPERED_FIX)
    return card


def upload_folder(folder, handle):
    """Uploads a checked preset folder with the hub's own client (the network call)."""
    scheme, reference = parse_handle(handle, upload=True)
    if scheme == "hf":
        hub = optional_import("huggingface_hub", feature="pushing to hf://")
        api = hub.HfApi()
        api.create_repo(reference, repo_type="model", exist_ok=True)
        api.upload_folder(repo_id=reference, folder_path=str(folder), repo_type="model")
    else:
        kagglehub = optional_import("kagglehub", feature="pushing to kaggle://")
        kagglehub.model_upload(reference, str(folder))


def push_hub_preset(source, handle, **card_fields):
    """Pushes a preset folder, a run folder or a `keras.Model` to `hf://` or `kaggle://`.

    Args:
        source: str, path or `keras.Model`. A hub preset folder (uploaded as is, after its
            check); a run folder, zoo entry or model is first saved to a temporary preset.
        handle: str. `hf://OWNER/NAME` or `kaggle://OWNER/MODEL/keras/VARIANT`.
        **card_fields: `save_hub_preset`'s `card` and card fields, for a run folder or model.

    Returns:
        `pathlib.Path` of the folder that was uploaded (deleted when temporary).

    Raises:
        ValueError: a bad handle (before any work).
        IntegrityError: a preset folder whose files differ from its card.
    """
    parse_handle(handle, upload=True)
    if isinstance(source, str | os.PathLike) and (Path(source) / METADATA_FILE).is_file():
        check_hub_preset(source)
        upload_folder(source, handle)
        return Path(source)
    staging = Path(tempfile.mkdtemp(prefix="keras_dml_preset_"))
    try:
        if isinstance(source, str | os.PathLike) and not Path(source).is_dir():
            folder = convert_zoo_entry(source, staging / "preset", handle=handle)
        else:
            folder = save_hub_preset(source, staging / "preset", handle=handle, **card_fields)
        upload_folder(folder, handle)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
