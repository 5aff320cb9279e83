"""`main`: the `keras-dml` console script, from the command line to a sub-command and exit code."""

import sys
import warnings

from keras_dml_cli.dispatch import run_command
from keras_dml_cli.errors import EXPECTED_ERRORS, error_message, print_warning
from keras_dml_cli.parser import build_parser


def main(argv=None):
    """Entry point of the `keras-dml` console script. Returns the exit code.

    Args:
        argv: list of str or `None`. The command line without the program name. Defaults to
            `None` (`sys.argv[1:]`).

    Returns:
        int: 0 on success; 1 for an error of the run, printed as one `keras-dml: error:` line;
        2 for a command-line usage error.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
    except ValueError as error:
        print(error_message(error), file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    warnings.showwarning = print_warning
    try:
        return run_command(args)
    except EXPECTED_ERRORS as error:
        print(error_message(error), file=sys.stderr)
        return 1
