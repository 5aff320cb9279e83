"""How `keras-dml` reports an expected error or a warning: one line on stderr, no traceback."""

import sys

EXPECTED_ERRORS = (ValueError, ImportError, OSError, KeyError)
ERROR_PREFIX = "keras-dml: error:"


def error_message(error):
    """The one-line message printed for an expected error (`keras-dml: error: ...`).

    Args:
        error: an exception of one of `EXPECTED_ERRORS`.

    Returns:
        str, the error's text on one line after `ERROR_PREFIX` (a `KeyError`'s message without
        its quotes; the class name when the text is empty).

    Examples:
    >>> error_message(ValueError("Unknown dataset 'x'.\\n  Use digits."))
    "keras-dml: error: Unknown dataset 'x'. Use digits."
    """
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    message = " ".join(message.strip().split()) or error.__class__.__name__
    return f"{ERROR_PREFIX} {message}"


def print_warning(message, category, filename, lineno, file=None, line=None):
    """Shows a warning as one `keras-dml: warning:` line (no source path).

    Its signature is that of `warnings.showwarning`, which `main` replaces with it.
    """
    print(f"keras-dml: warning: {message}", file=sys.stderr, flush=True)
