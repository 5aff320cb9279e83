"""The `keras-dml` command: `arguments` (no Keras), `parser`, `entry.main`, `dispatch` to `run`."""

import os

# Quiet TensorFlow's C++ start-up logging for a command-line tool (users can override it).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_dml_cli.entry import main  # noqa: E402
from keras_dml_cli.errors import ERROR_PREFIX, EXPECTED_ERRORS, error_message  # noqa: E402
from keras_dml_cli.parser import build_parser  # noqa: E402
from keras_dml_cli.plugins import load_plugins  # noqa: E402

__all__ = [
    "ERROR_PREFIX",
    "EXPECTED_ERRORS",
    "build_parser",
    "error_message",
    "load_plugins",
    "main",
]
