"""How `keras-dml` reports an expected error or a warning: one line on stderr, no traceback."""

import json
import os
import sys

EXPECTED_ERRORS = (ValueError, ImportError, OSError, KeyError)
ERROR_PREFIX = "keras-dml: error:"
# A Keras backend's module -> the keras-dml extra that installs it (keras-dml depends on none).
BACKEND_INSTALLS = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}


def configured_backend():
    """The backend `KERAS_BACKEND` or `$KERAS_HOME/keras.json` names, without importing Keras."""
    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"]
    home = os.environ.get("KERAS_HOME", os.path.join(os.path.expanduser("~"), ".keras"))
    try:
        with open(os.path.join(home, "keras.json")) as file:
            return json.load(file).get("backend", "tensorflow")
    except (OSError, ValueError):
        return "tensorflow"


def missing_backend_message(module):
    """What to do when Keras' backend `module` is not installed, in one line."""
    others = " or ".join(
        f'KERAS_BACKEND={name} with pip install "keras-dml[{extra}]"'
        for name, extra in BACKEND_INSTALLS.items()
        if name != module
    )
    return (
        f"Keras' backend '{module}' is not installed (KERAS_BACKEND or ~/.keras/keras.json "
        f'chooses it): pip install "keras-dml[{BACKEND_INSTALLS[module]}]", or use {others}.'
    )


def error_message(error):
    """The one-line `keras-dml: error: ...` message of an expected error.

    Examples:
    >>> error_message(ValueError("Unknown dataset 'x'.\\n  Use digits."))
    "keras-dml: error: Unknown dataset 'x'. Use digits."
    """
    if isinstance(error, ModuleNotFoundError) and error.name in BACKEND_INSTALLS:
        if error.name == configured_backend():
            return f"{ERROR_PREFIX} {missing_backend_message(error.name)}"
        extra = BACKEND_INSTALLS[error.name]
        return (
            f"{ERROR_PREFIX} `{error.name}` is needed for this command but is not installed: "
            f'pip install "keras-dml[{extra}]".'
        )
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    message = " ".join(message.strip().split()) or error.__class__.__name__
    return f"{ERROR_PREFIX} {message}"


def print_warning(message, category, filename, lineno, file=None, line=None):
    """Shows a warning as one `keras-dml: warning:` line (`warnings.showwarning`'s signature)."""
    print(f"keras-dml: warning: {message}", file=sys.stderr, flush=True)
