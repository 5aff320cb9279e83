"""`keras-dml demo`'s arguments and the check of its output folder (run: `keras_dml.cli.demo`)."""

from keras_dml.cli.names import BUILTIN_DEMO_METHODS
from keras_dml.demo.folder import check_demo_folder


def add_demo_parser(subparsers):
    """Adds the `demo` sub-command to `keras-dml`'s sub-parsers.

    Args:
        subparsers: the `argparse` sub-parsers action of the `keras-dml` parser.
    """
    names = ",".join(BUILTIN_DEMO_METHODS)
    methods_help = f"comma-separated subset of: {names} (default: all)"
    parser = subparsers.add_parser(
        "demo", help="train every method briefly on the embedded digits data, compare, export"
    )
    parser.add_argument("--output", default="demo_output", help="folder for the demo's files")
    parser.add_argument("--epochs", type=int, help="epochs per method (default: the demo's own)")
    parser.add_argument("--methods", help=methods_help)
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an earlier demo in --output (by default a folder holding files is refused)",
    )


def check_demo_args(args):
    """Refuses an output folder holding files (without `--overwrite`) before TensorFlow loads.

    Args:
        args: `argparse.Namespace` of the `demo` sub-command.

    Raises:
        FileExistsError: see `keras_dml.demo.folder.check_demo_folder`.
    """
    check_demo_folder(args.output, args.overwrite)
