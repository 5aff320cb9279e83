"""The folder of a saved `EmbeddingIndex` (docs/search.md), each file's size and sha256 checked."""

import json
import os
from pathlib import Path

import numpy as np

from keras_dml.search.backends import make_backend
from keras_dml.search.errors import IndexFormatError
from keras_dml.utils.sha256 import sha256_file

FORMAT = "keras-dml-index"
VERSION = 1
METADATA = "index.json"


def save_index(index, folder):
    """Writes `index` to `folder` (created; existing index files are replaced)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    embeddings = index.embeddings
    target = (folder / "embeddings.npy").resolve()
    if isinstance(embeddings, np.memmap) and Path(embeddings.filename).resolve() == target:
        files = {"embeddings.npy": lambda p: None}  # saving over its own source: unchanged
    else:
        files = {"embeddings.npy": lambda p: np.save(p, embeddings)}
    if index.labels is not None:
        files["labels.npy"] = lambda p: np.save(p, index.labels)
    if index.ids is not None:
        files["ids.json"] = lambda p: p.write_text(
            json.dumps([i if isinstance(i, (int, str)) else str(i) for i in index.ids]),
            encoding="utf-8",
        )
    if index.backend_name != "exact":
        files["faiss.index"] = index.backend.write
    for name in ("embeddings.npy", "labels.npy", "ids.json", "faiss.index"):
        if name not in files and (folder / name).exists():
            (folder / name).unlink()
    checks = {}
    for name, write in files.items():
        path = folder / name
        write(path)
        checks[name] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    options = dict(index.backend_options)
    if index.backend_name != "exact":
        options.update(index.backend.config())
    options.pop("use_gpu", None)
    metadata = {
        "format": FORMAT,
        "version": VERSION,
        "backend": index.backend_name,
        "backend_options": options,
        "dim": index.dim,
        "count": len(index),
        "normalize": index.normalize,
        "learner_slices": index.learner_slices,
        "class_names": index.class_names,
        "calibration": index.calibration,
        "model": None if index.embedder is None else str(index.embedder.description),
        "files": checks,
    }
    (folder / METADATA).write_text(json.dumps(metadata, indent=2), encoding="utf-8")
    return str(folder)


def read_metadata(folder):
    """The parsed `index.json` of a saved index folder, format and version checked."""
    path = Path(folder) / METADATA
    if not path.is_file():
        raise IndexFormatError(
            f"{os.fspath(folder)!r} is not a saved keras-dml index (no {METADATA}); save one "
            "with `index.save(folder)` or `keras-dml search ... --save-index DIR`."
        )
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise IndexFormatError(
            f"{path} is not valid JSON ({error}); save the index again."
        ) from None
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        raise IndexFormatError(f"{path} is not a keras-dml index description; save it again.")
    if metadata.get("version") != VERSION:
        raise IndexFormatError(
            f"{path} has index format version {metadata.get('version')}; this keras-dml reads "
            f"version {VERSION}. Rebuild the index with this version."
        )
    return metadata


def _check_files(folder, metadata, verify):
    for name, expected in metadata["files"].items():
        path = Path(folder) / name
        if not path.is_file():
            raise IndexFormatError(f"The index file {path} is missing; save the index again.")
        size = path.stat().st_size
        if size != expected["size"]:
            raise IndexFormatError(
                f"The index file {path} has {size} bytes but {expected['size']} were saved: it is "
                "truncated or was changed. Save the index again."
            )
        if verify and sha256_file(path) != expected["sha256"]:
            raise IndexFormatError(
                f"The index file {path} is corrupted (sha256 differs from the saved one). Save "
                "the index again."
            )


def read_index(index_class, folder, model=None, verify=True, mmap=True):
    """Reads an index saved by `save_index` (`EmbeddingIndex.load` and `load_index` call it).

    Raises:
        IndexFormatError: missing, corrupted or inconsistent files, or a model whose embedding
            size differs from the index's.
    """
    metadata = read_metadata(folder)
    _check_files(folder, metadata, verify)
    folder = Path(folder)
    try:
        embeddings = np.load(folder / "embeddings.npy", mmap_mode="r" if mmap else None)
    except ValueError as error:
        raise IndexFormatError(f"Cannot read {folder / 'embeddings.npy'}: {error}.") from None
    count, dim = metadata["count"], metadata["dim"]
    if embeddings.shape != (count, dim) or embeddings.dtype != np.float32:
        raise IndexFormatError(
            f"{folder / 'embeddings.npy'} holds {embeddings.dtype} {embeddings.shape} but the "
            f"metadata says float32 ({count}, {dim}). Save the index again."
        )
    index = index_class(
        dim=dim,
        backend=metadata["backend"],
        model=model,
        normalize=False,  # stored vectors are already normalised when it was asked
        learner_slices=metadata["learner_slices"],
        **metadata["backend_options"],
    )
    index.normalize = bool(metadata["normalize"])
    index._parts = [embeddings]
    if (folder / "labels.npy").is_file() and "labels.npy" in metadata["files"]:
        index.labels = np.load(folder / "labels.npy")
        if index.labels.shape != (count,):
            raise IndexFormatError(
                f"{folder / 'labels.npy'} holds {index.labels.shape[0]} labels for {count} "
                "embeddings. Save the index again."
            )
    if "ids.json" in metadata["files"]:
        index.ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        if len(index.ids) != count:
            raise IndexFormatError(
                f"{folder / 'ids.json'} holds {len(index.ids)} ids for {count} embeddings. "
                "Save the index again."
            )
    index.class_names = metadata["class_names"]
    index.calibration = metadata["calibration"]
    if index.embedder is not None:
        probe_size = index.embedder.image_size or (32, 32)
        probe = index.embedder(np.zeros((1, *probe_size, 3), np.float32))
        if probe.shape[1] != dim:
            raise IndexFormatError(
                f"The model embeds to {probe.shape[1]} dimensions but the index at {folder} "
                f"holds {dim}-d embeddings (made with {metadata['model']!r}). Use that model or "
                "rebuild the index."
            )
    if metadata["backend"] != "exact":
        backend = make_backend(metadata["backend"], dim, index.backend_options)
        backend.read(folder / "faiss.index", count)
        backend.embeddings = embeddings
        index._backend, index._built = backend, True
    return index
