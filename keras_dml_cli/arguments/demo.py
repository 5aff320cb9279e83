"""`keras-dml demo`'s arguments (the run checks the output folder: `keras_dml_cli.run.demo`)."""

from keras_dml_cli.catalogue import catalogue


def add_demo_parser(subparsers):
    """Adds the `demo` sub-command to `keras-dml`'s sub-parsers."""
    names = ",".join(catalogue()["demo_methods"])
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
