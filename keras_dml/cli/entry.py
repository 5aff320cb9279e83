"""`main`: the `keras-dml` console script, from the command line to a sub-command and exit code."""

import sys
import warnings

from keras_dml.cli.backbones import run_backbones
from keras_dml.cli.demo import run_demo
from keras_dml.cli.errors import EXPECTED_ERRORS, error_message, print_warning
from keras_dml.cli.evaluate import run_evaluate
from keras_dml.cli.parser import build_parser
from keras_dml.cli.report import run_report
from keras_dml.cli.train import run_train


def main(argv=None):
    """Entry point of the `keras-dml` console script. Returns the exit code.

    Args:
        argv: list of str or `None`. The command line without the program name. Defaults to
            `None` (`sys.argv[1:]`).

    Returns:
        int: 0 on success; 1 for an error of the run (`EXPECTED_ERRORS`: a bad value, a missing
        file, an unknown name), printed as one `keras-dml: error:` line, as `export` and `zoo`
        do; 2 for a command-line usage error (argparse's convention, also after the usage
        line). Warnings print as one `keras-dml: warning:` line.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
    except ValueError as error:
        print(error_message(error), file=sys.stderr)
        return 1
    args = parser.parse_args(argv)
    warnings.showwarning = print_warning
    runners = {
        "train": run_train,
        "evaluate": run_evaluate,
        "demo": run_demo,
        "report": run_report,
        "backbones": run_backbones,
    }
    try:
        if args.command in runners:
            return runners[args.command](args)
        if args.command == "export":
            from keras_dml.export.cli import run_export

            return run_export(args)
        if args.command == "search":
            from keras_dml.search.cli import run_search

            return run_search(args)
        from keras_dml.zoo.cli import run_zoo

        return run_zoo(args)
    except EXPECTED_ERRORS as error:
        print(error_message(error), file=sys.stderr)
        return 1
