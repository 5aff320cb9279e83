"""The `keras-dml` command: train, evaluate, report, export, zoo, demo and search.

`arguments` defines each sub-command's arguments and early checks (no Keras), `parser` assembles
them, `entry` holds `main`, `commands` names the module that runs each sub-command (one module a
sub-command: `train`, `evaluate`, `demo`, `report`, `backbones` here; export, zoo and search in
their own packages' `cli.py`), `errors` prints expected errors and warnings as one line,
`plugins` imports `--plugin` modules.
"""

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
