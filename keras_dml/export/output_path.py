"""Checks that an export can write its output, before any model is loaded or converted."""

import os

KINDS = {"file": "ONNX file", "directory": "SavedModel folder"}


def check_output_path(path, kind):
    """Raises unless an export can create (or replace) `path`, a `"file"` or `"directory"` (`kind`).

    Raises:
        IsADirectoryError: an ONNX `path` is an existing folder.
        NotADirectoryError: a SavedModel `path`, or one of `path`'s ancestors, is a file.
        PermissionError: the folder that would hold `path` is not writable.
    """
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {sorted(KINDS)}. Received: kind={kind!r}")
    what = f"Cannot write the {KINDS[kind]} {os.fspath(path)!r}:"
    path = os.path.abspath(os.fspath(path))
    if kind == "file" and os.path.isdir(path):
        raise IsADirectoryError(
            f"{what} it is a folder; give a file name, e.g. --output "
            f"{os.path.join(path, 'model.onnx')}."
        )
    if kind == "directory" and os.path.lexists(path) and not os.path.isdir(path):
        raise NotADirectoryError(
            f"{what} a file of that name exists; remove it or choose another --output."
        )
    if os.path.lexists(path):
        _check_writable(what, path if kind == "directory" else os.path.dirname(path))
        if kind == "file":
            _check_writable(what, path)
        return
    ancestor = os.path.dirname(path)
    while not os.path.lexists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        raise NotADirectoryError(
            f"{what} {ancestor!r} is a file, not a folder; choose an --output in a folder."
        )
    _check_writable(what, ancestor)


def _check_writable(what, target):
    if not os.access(target, os.W_OK | (os.X_OK if os.path.isdir(target) else 0)):
        raise PermissionError(
            f"{what} {target!r} is not writable; choose an --output in a writable folder."
        )
