"""`load_index`: an `EmbeddingIndex` from its saved folder, every file checked."""

from keras_dml.search.index import EmbeddingIndex
from keras_dml.search.index_folder import FORMAT, METADATA, VERSION, read_metadata, save_index

__all__ = ["FORMAT", "METADATA", "VERSION", "load_index", "read_metadata", "save_index"]


def load_index(folder, model=None, verify=True, mmap=True):
    """Loads an index saved by `EmbeddingIndex.save`.

    Args:
        folder: str. The saved index folder.
        model: model to embed queries with, or None for embeddings only. Defaults to `None`.
        verify: bool. Check every file's sha256 (sizes always are). Defaults to `True`.
        mmap: bool. Memory-map the embeddings. Defaults to `True`.

    Raises:
        IndexFormatError: missing, corrupted or inconsistent files, or a model of another size.

    Examples:
    >>> import numpy as np, tempfile
    >>> folder = EmbeddingIndex.from_embeddings(np.eye(3, dtype="float32")).save(tempfile.mkdtemp())
    >>> len(load_index(folder))
    3
    """
    return EmbeddingIndex.load(folder, model=model, verify=verify, mmap=mmap)
