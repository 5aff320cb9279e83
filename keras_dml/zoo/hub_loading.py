"""Hub presets read back: handles, files fetched and checked against the card, the model."""

import json
import os
from pathlib import Path

from keras_dml.utils import optional_import
from keras_dml.zoo.building import build_model, read_config
from keras_dml.zoo.card import ModelCard
from keras_dml.zoo.errors import DownloadError, ZooError
from keras_dml.zoo.integrity import verify_file
from keras_dml.zoo.schema import validate_card

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.weights.h5"
METADATA_FILE = "metadata.json"
README_FILE = "README.md"
CARD_KEY = "keras_dml"
HANDLE_FORMS = "hf://OWNER/NAME or kaggle://OWNER/MODEL/keras/VARIANT[/VERSION]"
TAMPERED_FIX = (
    "The preset changed after it was saved: save it again with keras_dml.zoo.save_hub_preset, or "
    "download it again (delete its copy in the Hugging Face or Kaggle cache)."
)


def parse_handle(handle, upload=False):
    """Splits a hub handle into `(scheme, reference)`: `("hf", "owner/name")`, `("kaggle", ...)`.

    Args:
        handle: str. `hf://OWNER/NAME` or `kaggle://OWNER/MODEL/keras/VARIANT[/VERSION]`.
        upload: bool. A push target: a Kaggle handle then takes no version. Defaults to `False`.

    Raises:
        ValueError: not one of the two forms (one line, with the forms).

    Examples:
    >>> parse_handle("hf://keras-dml/digits_dc_convnet")
    ('hf', 'keras-dml/digits_dc_convnet')
    """
    text = str(handle)
    scheme, separator, reference = text.partition("://")
    parts = reference.split("/")
    if not separator or scheme not in ("hf", "kaggle") or not all(parts):
        raise ValueError(f"{text!r} is not a hub handle; use {HANDLE_FORMS}.")
    if scheme == "hf" and len(parts) != 2:
        raise ValueError(f"{text!r}: a Hugging Face handle is hf://OWNER/NAME (two parts).")
    if scheme == "kaggle":
        versioned = len(parts) == 5 and parts[4].isdigit()
        if len(parts) not in (4, 5) or (len(parts) == 5 and (upload or not versioned)):
            shape = "kaggle://OWNER/MODEL/keras/VARIANT" + ("" if upload else "[/VERSION]")
            raise ValueError(f"{text!r}: a Kaggle handle is {shape}.")
    return scheme, reference


def _first_line(error):
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def fetch_preset_file(preset, filename):
    """The local path of one file of a preset folder or hub handle (downloaded if needed).

    Raises:
        FileNotFoundError: a folder lacks the file.
        DownloadError: the hub could not give the file (one line, with the hub's reason).
    """
    text = os.fspath(preset)
    if "://" not in text:
        path = Path(text).expanduser() / filename
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} is missing; a hub preset folder holds {CONFIG_FILE}, {WEIGHTS_FILE} "
                f"and {METADATA_FILE} (write one with keras_dml.zoo.save_hub_preset)."
            )
        return path
    scheme, reference = parse_handle(text)
    try:
        if scheme == "hf":
            hub = optional_import("huggingface_hub", feature="hf:// handles")
            return Path(hub.hf_hub_download(repo_id=reference, filename=filename))
        kagglehub = optional_import("kagglehub", feature="kaggle:// handles")
        return Path(kagglehub.model_download(reference, path=filename))
    except ImportError:
        raise
    except Exception as error:  # Each hub has its own errors; all mean "not fetched".
        raise DownloadError(
            f"Cannot fetch {filename} of {text}: {type(error).__name__}: {_first_line(error)}"
        ) from error


def read_hub_card(preset):
    """The verified card of a hub preset: its `metadata.json`'s keras-dml card as a `ModelCard`."""
    metadata_path = fetch_preset_file(preset, METADATA_FILE)
    source = f"{os.fspath(preset)}/{METADATA_FILE}"
    try:
        metadata = json.loads(Path(metadata_path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ZooError(f"Cannot read {source}: {error}") from error
    if not isinstance(metadata, dict) or not isinstance(metadata.get(CARD_KEY), dict):
        raise ZooError(
            f"{source} has no '{CARD_KEY}' card: not a keras-dml preset (a keras-hub backbone "
            "is used through the backbone keras_hub:PRESET instead)."
        )
    card = validate_card(metadata[CARD_KEY], source=source)
    model = card.get("model") or {}
    if not isinstance(model.get("config"), str):
        raise ZooError(
            f"{source}: a hub preset's card names its config file (model.config = "
            f"'{CONFIG_FILE}'); save the preset again with keras_dml.zoo.save_hub_preset."
        )
    return ModelCard(data=card, source=Path(metadata_path))


def load_hub_preset(preset):
    """Loads a hub preset after checking every file against its card; returns `(model, card)`.

    Args:
        preset: str or path. A preset folder, `hf://OWNER/NAME` or
            `kaggle://OWNER/MODEL/keras/VARIANT[/VERSION]`.

    Raises:
        IntegrityError: a file's sha256 or size differs from the card (nothing is loaded).
        UnsafeFormatError: the config needs code that safe_mode refuses.
    """
    card = read_hub_card(preset)
    paths = {}
    for entry in card.files:
        path = fetch_preset_file(preset, entry["filename"])
        verify_file(
            path,
            entry["sha256"],
            entry["size"],
            origin=f"{os.fspath(preset)}/{entry['filename']}",
            delete=False,
            filename=entry["filename"],
            fix=TAMPERED_FIX,
        )
        paths[entry["filename"]] = path
    model_section = card.data["model"]
    config = read_config(paths[model_section["config"]])
    weights = paths[model_section["weights"]]
    source = f"{os.fspath(preset)}/{model_section['config']}"
    return build_model(config, weights, card.data["preprocessing"], source), card
