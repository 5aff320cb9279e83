"""Where model cards are found, listing them and looking one up by name."""

import difflib
import os
from pathlib import Path

from keras_dml.zoo.card import read_card
from keras_dml.zoo.errors import CardValidationError, UnknownModelError

MODELS_DIR_ENV = "KERAS_DML_MODELS_DIR"
_PACKAGE_CARDS = Path(__file__).resolve().parent / "cards"
_REPOSITORY_MODELS = Path(__file__).resolve().parents[2] / "model_zoo"
LIST_COMMAND = "keras-dml zoo list"


def card_directories():
    """The folders searched for cards, in priority order, existing ones only."""
    candidates = [Path(p) for p in os.environ.get(MODELS_DIR_ENV, "").split(os.pathsep) if p]
    candidates.append(_PACKAGE_CARDS)
    if (_REPOSITORY_MODELS.parent / "pyproject.toml").is_file():  # Only in a source checkout.
        candidates.append(_REPOSITORY_MODELS)
    seen, result = set(), []
    for directory in candidates:
        directory = directory.expanduser()
        if not directory.is_dir():
            continue
        key = directory.resolve()
        if key not in seen:
            seen.add(key)
            result.append(key)
    return result


def _card_files():
    """Yields (name, path) for every card file in priority order, first occurrence wins."""
    seen = set()
    for directory in card_directories():
        for path in sorted(directory.glob("*.json")):
            if path.stem not in seen and path.is_file():
                seen.add(path.stem)
                yield path.stem, path


def _read_named_card(name, path):
    card = read_card(path)
    if card.name != name:
        raise CardValidationError(
            path, "name", f"is '{card.name}' but the file is '{path.name}'; rename one to match"
        )
    return card


def available_names():
    """Returns the sorted names of every card found (without validating them)."""
    return sorted(name for name, _ in _card_files())


def list_models(status=None):
    """Lists the model cards found, as short summaries sorted by name.

    Args:
        status: str or None. Keep only `"published"` or `"not published"` cards. Defaults to
            `None`.

    Returns:
        list of dicts with `name`, `status`, `method`, `backbone`, `dataset`, `embedding_dim`,
        `metrics`, `size` and `card`.

    Raises:
        ValueError: `status` is not a known status.
        CardValidationError: a card file is invalid.
    """
    if status not in (None, "published", "not published"):
        raise ValueError(
            f"`status` must be None, 'published' or 'not published'. Received: status={status!r}"
        )
    summaries = []
    for name, path in _card_files():
        card = _read_named_card(name, path)
        if status is None or card.status == status:
            summaries.append(card.summary())
    return sorted(summaries, key=lambda s: s["name"])


def suggest_names(name, names, count=3):
    """Returns up to `count` names close to `name` (difflib, plus prefix/substring matches)."""
    lowered = name.lower()
    close = difflib.get_close_matches(lowered, names, n=count, cutoff=0.5)
    for candidate in names:
        if len(close) >= count:
            break
        if candidate not in close and (lowered in candidate or candidate in lowered):
            close.append(candidate)
    return close


def get_card(name):
    """Returns the validated `ModelCard` of a model name.

    Raises:
        UnknownModelError: no card has that name (the message suggests close names).
        CardValidationError: the card is invalid.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"`name` must be a non-empty string. Received: name={name!r}")
    files = dict(_card_files())
    if name in files:
        return _read_named_card(name, files[name])
    suggestions = suggest_names(name, sorted(files))
    hint = f" Did you mean: {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
    searched = ", ".join(str(d) for d in card_directories()) or "(no card directory exists)"
    raise UnknownModelError(
        f"No model card named '{name}'.{hint} Run `{LIST_COMMAND}` (or "
        f"`keras_dml.zoo.list_models()`) to see every model. Searched: {searched}; add "
        f"directories with the {MODELS_DIR_ENV} environment variable."
    )
