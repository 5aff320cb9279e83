"""The `keras-dml` command: train, evaluate, report, export, zoo, demo and search.

`arguments` defines each sub-command's arguments and early checks (no Keras), `parser` assembles
them, `entry` holds `main`, `commands` names the module that runs each sub-command (one module a
sub-command: `train`, `evaluate`, `demo`, `report`, `backbones` here; export, zoo and search in
their own packages' `cli.py`), `errors` prints expected errors and warnings as one line,
`plugins` imports `--plugin` modules.
"""

import os
import warnings

# Quiet TensorFlow's C++ start-up logging for a command-line tool (users can override it).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from keras_dml.cli.arguments.train import DATASET_NAMES  # noqa: E402
from keras_dml.cli.commands import load_entry_point  # noqa: E402
from keras_dml.cli.entry import main  # noqa: E402
from keras_dml.cli.errors import ERROR_PREFIX, EXPECTED_ERRORS, error_message  # noqa: E402
from keras_dml.cli.parser import build_parser  # noqa: E402
from keras_dml.cli.plugins import load_plugins  # noqa: E402


def config_from_args(args):
    """Deprecated: use `keras_dml.cli.train.config_from_args` (this package imports no Keras).

    Args:
        args: `argparse.Namespace` of the `train` sub-command.

    Returns:
        `keras_dml.training.RunConfig`, as `keras_dml.cli.train.config_from_args` returns.
    """
    warnings.warn(
        "keras_dml.cli.config_from_args moved to keras_dml.cli.train.config_from_args; import "
        "it from there.",
        DeprecationWarning,
        stacklevel=2,
    )
    return load_entry_point("keras_dml.cli.train:config_from_args")(args)


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
