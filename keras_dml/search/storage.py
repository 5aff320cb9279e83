"""Saving and loading an `EmbeddingIndex` as a folder (the format: `index_folder`).

`load_index` refuses a folder whose files are missing, changed (size or sha256), or disagree with
each other or with the model given to it.
"""

from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.index_folder import FORMAT, METADATA, VERSION, read_metadata, save_index

__all__ = ["FORMAT", "METADATA", "VERSION", "load_index", "read_metadata", "save_index"]


def load_index(folder, model=None, verify=True, mmap=True):
    """Loads an index saved by `save_index` (or `EmbeddingIndex.save`).

    Args:
        folder: str. The saved index folder.
        model: model to embed queries with (see `Embedder`), or None for embeddings only.
        verify: bool. Check every file's sha256 (sizes are always checked). Defaults to `True`.
        mmap: bool. Memory-map the embeddings instead of reading them. Defaults to `True`.

    Returns:
        `EmbeddingIndex`.

    Raises:
        IndexFormatError: missing, corrupted or inconsistent files, or a model whose embedding
            size differs from the index's.

    Examples:
    >>> import numpy as np, tempfile
    >>> folder = EmbeddingIndex.from_embeddings(np.eye(3, dtype="float32")).save(tempfile.mkdtemp())
    >>> len(load_index(folder))
    3
    """
    return EmbeddingIndex.load(folder, model=model, verify=verify, mmap=mmap)
