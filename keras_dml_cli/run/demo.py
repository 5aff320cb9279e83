"""`keras-dml demo`: every method trained briefly on the bundled digits, compared, exported."""

from keras_dml import demo

__all__ = ["run_demo"]


def run_demo(args):
    """Runs `keras-dml demo` (`keras_dml.demo.run_demo`); returns the exit code."""
    methods = args.methods.split(",") if args.methods else None
    demo.run_demo(args.output, methods=methods, epochs=args.epochs, overwrite=args.overwrite)
    return 0
