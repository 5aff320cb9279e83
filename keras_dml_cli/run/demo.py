"""`keras-dml demo`: every method trained briefly on the embedded digits, compared, exported.

Its arguments are defined in `keras_dml_cli.arguments.demo` (no Keras); this module is loaded
when `demo` runs.
"""

from keras_dml import demo

__all__ = ["run_demo"]


def run_demo(args):
    """Runs `keras-dml demo` (`keras_dml.demo.run_demo`).

    Args:
        args: `argparse.Namespace` of the `demo` sub-command.

    Returns:
        int, the exit code (0).
    """
    methods = args.methods.split(",") if args.methods else None
    demo.run_demo(args.output, methods=methods, epochs=args.epochs, overwrite=args.overwrite)
    return 0
