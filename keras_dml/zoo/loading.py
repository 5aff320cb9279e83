"""`load`: a zoo model by name, preset folder or handle, card or `.keras` file, never run code."""

import os
import zipfile
from pathlib import Path

# Imported for their registrations: the serializable layers, losses and models a `.keras` file or
# a card's config names.
from keras_dml import backbones, layers, losses, models  # noqa: F401
from keras_dml.zoo.building import build_model, read_config
from keras_dml.zoo.cache import fetch_file, primary_filename
from keras_dml.zoo.card import read_card
from keras_dml.zoo.errors import UnsafeFormatError
from keras_dml.zoo.hub_loading import load_hub_preset
from keras_dml.zoo.registry import get_card

_UNSAFE_SUFFIXES = {
    ".pb": "a TensorFlow SavedModel/GraphDef (its graph can run arbitrary ops)",
    ".pbtxt": "a TensorFlow graph",
    ".pkl": "a pickle (unpickling runs code)",
    ".pickle": "a pickle (unpickling runs code)",
    ".joblib": "a joblib pickle (unpickling runs code)",
    ".pt": "a PyTorch checkpoint (pickle-based)",
    ".pth": "a PyTorch checkpoint (pickle-based)",
    ".ckpt": "a checkpoint of unknown provenance",
    ".h5": "a legacy Keras HDF5 model (can embed Lambda bytecode)",
    ".hdf5": "a legacy Keras HDF5 model (can embed Lambda bytecode)",
}


def _reject_unsafe(path):
    path = Path(path)
    if path.is_dir():
        if (path / "saved_model.pb").exists() or (path / "saved_model.pbtxt").exists():
            raise UnsafeFormatError(
                f"{path} is a TensorFlow SavedModel; the zoo does not load SavedModels because "
                "their graphs can run arbitrary ops. Load a `.keras` file or a preset "
                "directory with a card.json instead (export SavedModels with keras_dml.export)."
            )
        return
    name = path.name.lower()
    if name.endswith(".weights.h5"):
        raise UnsafeFormatError(
            f"{path} holds weights only; build the model from its card instead: "
            "load the preset directory or card.json that lists it."
        )
    suffix = path.suffix.lower()
    if suffix in _UNSAFE_SUFFIXES:
        raise UnsafeFormatError(
            f"Refusing to load {path}: it is {_UNSAFE_SUFFIXES[suffix]}. The zoo only loads "
            "`.keras` archives (with safe_mode=True) and `.weights.h5` weights named by a card."
        )
    if suffix not in (".keras", ".json"):
        raise UnsafeFormatError(
            f"Cannot load {path}: unknown format '{suffix}'. Expected a `.keras` file, a card "
            "`.json` or a preset directory containing card.json."
        )


def _load_keras_archive(path, compile):
    import keras

    if not zipfile.is_zipfile(path):
        raise UnsafeFormatError(
            f"{path} is not a `.keras` zip archive (a legacy HDF5 or SavedModel renamed?). "
            "Re-save the model with `model.save('model.keras')`."
        )
    with zipfile.ZipFile(path) as archive:
        if "config.json" not in archive.namelist():
            raise UnsafeFormatError(f"{path} is a zip archive without config.json, not a .keras")
    try:
        model = keras.saving.load_model(path, compile=compile, safe_mode=True)
    except ValueError as error:
        if "safe_mode" in str(error):
            raise UnsafeFormatError(
                f"{path} contains code that safe_mode refuses to deserialize (e.g. a Lambda "
                f"layer); the zoo never disables safe_mode. Keras said: {error}"
            ) from error
        raise
    if not isinstance(model, keras.Model):
        raise TypeError(f"{path} holds a {type(model).__name__}, not a keras.Model.")
    return model


def load_card(card, compile=False, **fetch_options):
    """Loads the model of a `ModelCard` after verifying its files (see `load`)."""
    model_section = card.data.get("model")
    path = fetch_file(card, card.file_entry(primary_filename(card)), **fetch_options)
    if "file" in model_section:
        return _load_keras_archive(path, compile)
    config = model_section["config"]
    if isinstance(config, str):
        config = read_config(fetch_file(card, card.file_entry(config), **fetch_options))
    return build_model(config, path, card.data["preprocessing"], f"card {card.source}")


def _looks_like_path(value):
    text = os.fspath(value)
    return (
        isinstance(value, os.PathLike)
        or "/" in text
        or os.sep in text
        or text.lower().endswith((".keras", ".json", ".h5"))
    )


def _load(name_or_path, compile, options):
    """`(model, card)` of anything `load` takes; `card` is None for a bare `.keras` file."""
    if not isinstance(name_or_path, str | os.PathLike):
        raise TypeError(
            f"`name_or_path` must be a str or path. Received: {type(name_or_path).__name__}"
        )
    if isinstance(name_or_path, str) and "://" in name_or_path:
        return load_hub_preset(name_or_path)
    path = Path(name_or_path).expanduser()
    if path.exists():
        _reject_unsafe(path)
        if path.is_dir():
            card_file = path / "card.json"
            if not card_file.is_file() and (path / "metadata.json").is_file():
                return load_hub_preset(path)
            if not card_file.is_file():
                raise FileNotFoundError(
                    f"{path} is a directory without card.json or metadata.json; a preset "
                    "folder is written by keras_dml.zoo.save_preset, save_hub_preset or "
                    "`keras-dml zoo publish`."
                )
            card = read_card(card_file)
        elif path.suffix.lower() == ".json":
            card = read_card(path)
        else:
            return _load_keras_archive(path, compile), None
    elif _looks_like_path(name_or_path):
        raise FileNotFoundError(
            f"No such file or directory: {path}. Pass an existing `.keras` file, card `.json`, "
            "preset folder, hf:// or kaggle:// handle, or a model name from `keras-dml zoo list`."
        )
    else:
        card = get_card(str(name_or_path))
    return load_card(card, compile=compile, **options), card


def load(name_or_path, compile=False, cache_dir=None, progress=None, **fetch_options):
    """Loads a verified zoo model.

    Args:
        name_or_path: str or path. A zoo model name, a preset folder, a card file, a `.keras`
            file, or a hub preset handle (`hf://owner/name`,
            `kaggle://owner/model/keras/variant`).
        compile: bool. Restore the training configuration of a `.keras` file. Defaults to
            `False`.
        cache_dir: str, path or None. Cache folder. Defaults to `None` (see `cache_root`).
        progress: bool or None. Download progress bar; `None` shows it on a terminal only.
        **fetch_options: `max_attempts`, `backoff_seconds`, `timeout`, `lock_timeout`.

    Returns:
        A `keras.Model` mapping raw pixels in [0, 255] to the concatenated embedding.

    Raises:
        UnknownModelError: an unknown name (the message suggests close names).
        IntegrityError: a file's size or hash differs from the card (nothing is loaded).
        UnsafeFormatError: a format that could execute code when loaded.
        ModelNotPublishedError, DownloadError: see `download`.

    Examples:
    >>> from keras_dml import zoo
    >>> model = zoo.load("digits_dc_convnet")  # doctest: +SKIP
    """
    options = dict(fetch_options, cache_dir=cache_dir, progress=progress)
    return _load(name_or_path, compile, options)[0]


def load_with_card(name_or_path, compile=False, **options):
    """Like `load`, but returns `(model, card)`; `card` is a `ModelCard`, or None for a `.keras`."""
    return _load(name_or_path, compile, options)


def resolve_model(model):
    """What `Embedder` runs for `model`: a `keras.Model`, or an ONNX / SavedModel path as is."""
    if not isinstance(model, (str, os.PathLike)):
        return model
    path = os.fspath(model)
    if path.endswith(".onnx") or os.path.isfile(os.path.join(path, "saved_model.pb")):
        return path
    return load(path)
