"""The `keras-dml` command: train, evaluate, report, export, zoo, demo and search.

One module a sub-command (`train`, `evaluate`, `demo`, `report`; export, zoo and search live in
their own packages' `cli.py`), `parser` assembles them, `entry` holds `main`, `errors` prints
expected errors and warnings as one line, `plugins` imports `--plugin` modules.
"""

import os

# Quiet TensorFlow's C++ start-up logging for a command-line tool (users can override it).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_dml.cli.entry import main  # noqa: E402
from keras_dml.cli.errors import ERROR_PREFIX, EXPECTED_ERRORS, error_message  # noqa: E402
from keras_dml.cli.parser import build_parser  # noqa: E402
from keras_dml.cli.plugins import load_plugins  # noqa: E402
from keras_dml.cli.train import DATASET_NAMES, config_from_args  # noqa: E402

# The name tests and scripts imported from the former `keras_dml/cli.py`.
_config_from_args = config_from_args

__all__ = [
    "DATASET_NAMES",
    "ERROR_PREFIX",
    "EXPECTED_ERRORS",
    "build_parser",
    "config_from_args",
    "error_message",
    "load_plugins",
    "main",
]
