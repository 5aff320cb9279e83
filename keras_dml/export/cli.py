"""`keras-dml export MODEL --format saved_model|onnx --output PATH`: export from the command line.

The top-level `keras-dml` command wires this in with::

    from keras_dml.export.cli import add_export_parser, run_export
    add_export_parser(subparsers)
    ...
    if args.command == "export":
        return run_export(args)

`python -m keras_dml.export.cli MODEL --format onnx --output model.onnx` runs it standalone.
"""

import argparse
import sys


def add_export_arguments(parser):
    """Adds the export options to `parser` (shared by the CLI and `export/export_model.py`).

    Args:
        parser: `argparse.ArgumentParser`.

    Returns:
        The same parser.
    """
    parser.add_argument(
        "model", help="a .keras file, a zoo preset directory or card, or a zoo model name"
    )
    parser.add_argument(
        "--format", required=True, choices=["saved_model", "onnx"], help="artifact format"
    )
    parser.add_argument(
        "--output", required=True, help="SavedModel directory or .onnx file to write"
    )
    parser.add_argument(
        "--opset", type=int, default=17, help="ONNX opset version (onnx only, default: 17)"
    )
    parser.add_argument(
        "--image-size",
        type=int,
        nargs="+",
        metavar="SIZE",
        help="input HEIGHT [WIDTH]; needed only for models built without a fixed size",
    )
    parser.add_argument(
        "--input-dtype",
        default="float32",
        choices=["float32", "uint8", "both"],
        help="dtype of the `images` input (both: SavedModel only; default: float32)",
    )
    parser.add_argument(
        "--atol", type=float, default=1e-5, help="parity tolerance vs Keras (default: 1e-5)"
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip the parity check against the Keras model"
    )
    parser.add_argument("--json", action="store_true", help="print the export report as JSON")
    return parser


def add_export_parser(subparsers):
    """Adds the `export` command to an argparse subparsers object.

    Args:
        subparsers: the object returned by `parser.add_subparsers(...)`.

    Returns:
        The `export` `argparse.ArgumentParser`.

    Examples:
    >>> parser = argparse.ArgumentParser(prog="keras-dml")
    >>> sub = parser.add_subparsers(dest="command")
    >>> _ = add_export_parser(sub)
    >>> args = parser.parse_args(["export", "m.keras", "--format", "onnx", "--output", "m.onnx"])
    >>> args.format, args.opset
    ('onnx', 17)
    """
    parser = subparsers.add_parser(
        "export",
        help="export a model to SavedModel or ONNX (images -> embedding)",
        description=(
            "Export a keras-dml model for serving. The artifact takes `images` (raw pixels "
            "[N, H, W, C] in [0, 255], dynamic batch, the model's input size) and returns "
            "`embedding` [N, D]; its output is checked against Keras unless --no-verify."
        ),
    )
    return add_export_arguments(parser)


def load_model(name_or_path):
    """Loads a model for export: through the zoo (names, presets, cards, `.keras` files).

    Args:
        name_or_path: str. What the user passed as MODEL.

    Returns:
        `keras.Model`.
    """
    from keras_dml import zoo

    return zoo.load(name_or_path, compile=False)


def export_from_args(args, model=None):
    """Runs the export that parsed `args` describe and returns its `ExportReport`.

    Args:
        args: `argparse.Namespace` from `add_export_arguments`.
        model: `keras.Model`. Already loaded model; defaults to `None` (load `args.model`).

    Returns:
        `ExportReport`.
    """
    from keras_dml.export.output_path import check_output_path

    # Everything the command line can get wrong fails here, before the model loads.
    image_size = _image_size(args.image_size)
    if args.format == "onnx" and args.input_dtype == "both":
        raise ValueError(
            "--input-dtype both is for SavedModel only (an ONNX graph has one input type). "
            "Export two ONNX files, one with --input-dtype float32 and one with uint8."
        )
    check_output_path(args.output, "directory" if args.format == "saved_model" else "file")
    # Imported here, not at the top: `keras-dml --help` builds this parser without TensorFlow.
    from keras_dml.export import export_onnx, export_saved_model

    if model is None:
        model = load_model(args.model)
    options = {"image_size": image_size, "verify": not args.no_verify, "atol": args.atol}
    if args.format == "saved_model":
        return export_saved_model(model, args.output, input_dtype=args.input_dtype, **options)
    return export_onnx(
        model, args.output, opset=args.opset, input_dtype=args.input_dtype, **options
    )


def run_export(args, out=None, err=None):
    """Executes `keras-dml export` and returns the process exit code.

    Args:
        args: `argparse.Namespace` from the `export` parser.
        out: text stream for the report. Defaults to `sys.stdout`.
        err: text stream for errors. Defaults to `sys.stderr`.

    Returns:
        int, 0 on success, 1 when the export failed (the reason is printed to `err`).
    """
    from keras_dml.export import ExportError, ExportParityError
    from keras_dml.utils import MissingDependencyError

    out = out or sys.stdout
    err = err or sys.stderr
    expected = (ExportError, ExportParityError, MissingDependencyError, FileExistsError, OSError)
    try:
        from keras_dml.zoo import ZooError

        expected = (*expected, ZooError)
    except ImportError:
        pass
    try:
        report = export_from_args(args)
    except (*expected, ValueError) as error:
        print(f"keras-dml: error: {error}", file=err)
        return 1
    print(report.to_json() if args.json else str(report), file=out)
    return 0


def _image_size(values):
    if not values:
        return None
    if len(values) > 2:
        raise ValueError(f"--image-size takes HEIGHT [WIDTH]. Received: {values}")
    return (values[0], values[-1])


def main(argv=None):
    """Standalone entry point: `python -m keras_dml.export.cli MODEL --format ... --output ...`."""
    parser = add_export_arguments(
        argparse.ArgumentParser(
            prog="keras-dml export", description="Export a keras-dml model to SavedModel or ONNX."
        )
    )
    return run_export(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
