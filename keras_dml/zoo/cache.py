"""Resolving a card's files to verified local paths: card folder, cache, mirror, URL."""

import contextlib
import os
import warnings
from pathlib import Path
from urllib.parse import quote, urlparse

from keras_dml.utils.keras_home import keras_dml_home
from keras_dml.zoo.errors import DownloadError, IntegrityError, ModelNotPublishedError
from keras_dml.zoo.integrity import verify_file
from keras_dml.zoo.lock import FileLock
from keras_dml.zoo.registry import get_card
from keras_dml.zoo.transfer import fetch_to_part

MIRROR_ENV = "KERAS_DML_MIRROR"
_HASH_PREFIX = 16


def cache_root(cache_dir=None):
    """The zoo cache folder: `cache_dir`, else `keras_dml_home() / "zoo"`.

    Examples:
    >>> cache_root("/scratch/zoo")
    PosixPath('/scratch/zoo')
    """
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    return keras_dml_home() / "zoo"


def cached_file_path(name, entry, cache_dir=None):
    """Returns where the cache keeps one file entry of card `name`."""
    return cache_root(cache_dir) / name / entry["sha256"][:_HASH_PREFIX] / entry["filename"]


def mirror_url(mirror, name, filename):
    """The URL `<mirror>/<name>/<filename>` of a file on a mirror (URL or local folder).

    Examples:
    >>> mirror_url("https://mirror.example.org/zoo/", "tiny", "model.keras")
    'https://mirror.example.org/zoo/tiny/model.keras'
    """
    if urlparse(mirror).scheme not in ("http", "https", "file"):
        return Path(mirror).expanduser().resolve().joinpath(name, filename).as_uri()
    return f"{mirror.rstrip('/')}/{quote(name)}/{quote(filename)}"


def _check(path, entry, delete):
    """Returns None if `path` matches the entry, else the `IntegrityError` (after a warning)."""
    try:
        verify_file(
            path,
            entry["sha256"],
            entry["size"],
            origin=str(path),
            delete=delete,
            filename=entry["filename"],
        )
    except IntegrityError as error:
        warnings.warn(f"Ignoring a bad copy: {error}", stacklevel=3)
        return error
    return None


def _verify_download(part, entry, url):
    verify_file(
        part, entry["sha256"], entry["size"], origin=url, delete=True, filename=entry["filename"]
    )


def _fsync_directory(directory):
    """Makes a rename durable (POSIX); silently skipped where directories cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _sources(card, entry):
    sources = []
    mirror = os.environ.get(MIRROR_ENV)
    if mirror:
        sources.append(mirror_url(mirror, card.name, entry["filename"]))
    if entry.get("url"):
        sources.append(entry["url"])
    return sources


def fetch_file(
    card,
    entry,
    cache_dir=None,
    progress=None,
    max_attempts=5,
    backoff_seconds=1.0,
    timeout=30.0,
    lock_timeout=3600.0,
):
    """Returns the verified local path of one file entry of a card, downloading if needed.

    Args:
        card: `ModelCard`. The card listing the file.
        entry: dict. One element of `card.files`.
        cache_dir: str, path or None. See `cache_root`. Defaults to `None`.
        progress: bool or None. Progress bar; `None` shows it on a terminal only.
        max_attempts: int. Attempts per source without progress. Defaults to `5`.
        backoff_seconds: float. First retry delay, doubled each time. Defaults to `1.0`.
        timeout: float. Socket timeout per request. Defaults to `30.0`.
        lock_timeout: float. Seconds to wait for another process downloading the same file.

    Raises:
        ModelNotPublishedError: the file is not available locally and the card is not published.
        IntegrityError: downloaded bytes do not match the card (the file is deleted).
        DownloadError: every source failed.
    """
    local = card.local_path(entry)
    local_error = None
    if local is not None and local.is_file():
        local_error = _check(local, entry, delete=False)
        if local_error is None:
            return local
    final = cached_file_path(card.name, entry, cache_dir)
    if final.is_file() and _check(final, entry, delete=True) is None:
        return final
    if not card.published:
        recipe = card.data["training"].get("recipe")
        raise ModelNotPublishedError(
            f"Model '{card.name}' is not published: its weights are not downloadable. "
            f"Train it yourself with the recipe {recipe} (see {card.source})."
        )
    sources = _sources(card, entry)
    if not sources and local_error is not None:
        raise local_error
    if not sources:
        raise DownloadError(
            f"'{entry['filename']}' of model '{card.name}' has no 'url' and its 'path' "
            f"({local}) is missing; set {MIRROR_ENV} to a mirror that holds it."
        )
    final.parent.mkdir(parents=True, exist_ok=True)
    part = final.with_name(final.name + ".part")
    with FileLock(final.with_name(final.name + ".lock"), timeout=lock_timeout):
        if final.is_file() and _check(final, entry, delete=True) is None:
            return final  # Another process finished the download while we waited.
        errors = []
        for url in sources:
            options = dict(
                max_attempts=max_attempts,
                backoff_seconds=backoff_seconds,
                timeout=timeout,
                progress=progress,
                description=f"{card.name}/{entry['filename']}",
            )
            try:
                resumed = part.exists()
                fetch_to_part(url, part, entry["size"], **options)
                try:
                    _verify_download(part, entry, url)
                except IntegrityError:
                    if not resumed:
                        raise
                    # The kept partial bytes may come from an older file: start again once.
                    fetch_to_part(url, part, entry["size"], **options)
                    _verify_download(part, entry, url)
            except DownloadError as error:
                errors.append(str(error))
                continue
            os.replace(part, final)
            _fsync_directory(final.parent)
            return final
    raise DownloadError(
        f"Could not download '{entry['filename']}' of model '{card.name}' from any source:\n  "
        + "\n  ".join(errors)
    )


def primary_filename(card):
    """Returns the file that `load` reads: `model.file` or `model.weights`."""
    model = card.data.get("model")
    if model is None and not card.published:
        recipe = card.data["training"].get("recipe")
        raise ModelNotPublishedError(
            f"Model '{card.name}' is not published: its weights are not downloadable. "
            f"Train it yourself with the recipe {recipe} (see {card.source})."
        )
    if model is None:
        raise ModelNotPublishedError(
            f"Model card '{card.name}' ({card.source}) has no 'model' section: nothing to load."
        )
    return model.get("file") or model["weights"]


def download(name, filename=None, cache_dir=None, progress=None, **fetch_options):
    """Downloads (or finds) a zoo model's file and returns its verified local path.

    Args:
        name: str. The model name (see `list_models`).
        filename: str or None. Which file of the card. Defaults to the file `load` reads.
        cache_dir: str, path or None. See `cache_root`. Defaults to `None`.
        progress: bool or None. Progress bar; `None` shows it on a terminal only.
        **fetch_options: `max_attempts`, `backoff_seconds`, `timeout`, `lock_timeout`.

    Raises:
        UnknownModelError: no card has that name.
        ModelNotPublishedError, IntegrityError, DownloadError: see `fetch_file`.
    """
    card = get_card(name)
    filename = filename or primary_filename(card)
    try:
        entry = card.file_entry(filename)
    except KeyError as error:
        listed = [e["filename"] for e in card.files]
        raise ValueError(f"Model '{name}' has no file '{filename}'. Its files: {listed}") from error
    return fetch_file(card, entry, cache_dir=cache_dir, progress=progress, **fetch_options)


def download_all(name, cache_dir=None, progress=None, **fetch_options):
    """Downloads every file of a card; returns a dict filename -> verified local path."""
    card = get_card(name)
    return {
        entry["filename"]: fetch_file(
            card, entry, cache_dir=cache_dir, progress=progress, **fetch_options
        )
        for entry in card.files
    }
