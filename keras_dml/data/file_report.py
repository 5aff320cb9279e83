"""One rule for the files a folder reader leaves out: counted, the first few named, or fatal."""

import warnings

# How many names a warning or an error lists before "and N more".
SHOWN = 5


class UnreadableFilesError(ValueError):
    """Image files that cannot be read, met with `strict_files=True` (`--strict-files`)."""


def first_few(names, shown=SHOWN):
    """The first `shown` names joined by commas, then `"and N more"`.

    Examples:
    >>> first_few(["a", "b", "c"], shown=2)
    'a, b and 1 more'
    """
    names = [str(name) for name in names]
    listed = ", ".join(names[:shown])
    return f"{listed} and {len(names) - shown} more" if len(names) > shown else listed


def report_unreadable(where, skipped, total, strict_files=False, note="", stacklevel=3):
    """Warns about the skipped files `[(path, reason or None), ...]`, or raises with `strict_files`.

    Raises:
        UnreadableFilesError: `strict_files` is true and `skipped` is not empty.
    """
    if not skipped:
        return
    listed = first_few([f"{path} ({reason})" if reason else path for path, reason in skipped])
    if strict_files:
        raise UnreadableFilesError(
            f"{where}: {len(skipped)} of {total} image files cannot be read: {listed}. Remove or "
            "fix them, or leave out strict_files (--strict-files) to skip them."
        )
    warnings.warn(
        f"{where}: skipping {len(skipped)} of {total} image files that are missing or cannot be "
        f"decoded: {listed}.{note} Pass strict_files=True (--strict-files) to stop instead.",
        UserWarning,
        stacklevel=stacklevel,
    )


def report_ignored(where, paths, why, stacklevel=3):
    """Notes the files a folder reader ignores (`why`: e.g. "not .jpg .png"), never silently."""
    if paths:
        warnings.warn(
            f"{where}: ignoring {len(paths)} files ({why}): {first_few(paths)}.",
            UserWarning,
            stacklevel=stacklevel,
        )


def error_reason(error):
    """One line for `error`: its type and its message on one line."""
    return f"{type(error).__name__}: {' '.join(str(error).split())}"
