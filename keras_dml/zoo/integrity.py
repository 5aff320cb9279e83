"""Size and sha256 verification of zoo files."""

import contextlib
import os

from keras_dml.utils.sha256 import sha256_file
from keras_dml.zoo.errors import IntegrityError

__all__ = ["sha256_file", "verify_file"]


def verify_file(path, sha256, size, origin=None, delete=True, filename=None, fix=None):
    """Checks a file's size, then its sha256; on a mismatch, optionally deletes it and raises.

    Args:
        path: str or path. The file to check.
        sha256: str. Expected hex digest.
        size: int. Expected size in bytes.
        origin: str. Where the bytes came from, for the message. Defaults to the path.
        delete: bool. Delete the file on a mismatch (not for the user's own files). Defaults to
            `True`.
        filename: str. Name shown in the message. Defaults to the file's base name.
        fix: str or None. The remedy the message gives. Defaults to `IntegrityError`'s.

    Raises:
        IntegrityError: naming expected and actual size and hash.
    """
    path = os.fspath(path)
    origin = origin or path
    actual_size = os.path.getsize(path)
    actual_sha = sha256_file(path)
    if actual_size != size or actual_sha != sha256:
        if delete:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        raise IntegrityError(
            filename or os.path.basename(path),
            sha256,
            actual_sha,
            size,
            actual_size,
            origin=origin,
            deleted=delete,
            fix=fix,
        )
