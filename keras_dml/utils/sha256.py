"""sha256 of a file, shared by the model zoo and the converted backbone weights."""

import hashlib


def sha256_file(path, chunk_size=1 << 20):
    """Returns the hex sha256 of a file, read in chunks.

    Args:
        path: str or path. The file to hash.
        chunk_size: int. Bytes per read. Defaults to 1 MiB.

    Returns:
        str, 64 lowercase hex digits.

    Examples:
    >>> sha256_file("models/files/tiny.keras")  # doctest: +SKIP
    '9f86d08...'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()
