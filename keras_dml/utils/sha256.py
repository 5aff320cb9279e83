"""sha256 of a file, shared by the model zoo and the converted backbone weights."""

import hashlib


def sha256_file(path, chunk_size=1 << 20):
    """Returns the hex sha256 of a file, read `chunk_size` bytes at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()
