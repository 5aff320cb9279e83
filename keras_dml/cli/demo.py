"""`keras-dml demo`: every method trained briefly on the embedded digits, compared, exported."""

from keras_dml.cli.names import BUILTIN_DEMO_METHODS
from keras_dml.demo_folder import check_demo_folder


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


def run_demo(args):
    """Runs `keras-dml demo` (`keras_dml.demo.run_demo`).

    Args:
        args: `argparse.Namespace` of the `demo` sub-command.

    Returns:
        int, the exit code (0).
    """
    check_demo_folder(args.output, args.overwrite)  # refuse before TensorFlow loads
    # Imported here, not at the top: the parser and the check above need no TensorFlow.
    from keras_dml.demo import run_demo as run

    methods = args.methods.split(",") if args.methods else None
    run(args.output, methods=methods, epochs=args.epochs, overwrite=args.overwrite)
    return 0
