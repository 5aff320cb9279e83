"""`keras-dml export`'s arguments and their checks, without TensorFlow."""

import argparse  # noqa: F401 (the doctest's)


def add_export_arguments(parser):
    """Adds the export options to `parser` (the CLI's and `deployment/export_model.py`'s)."""
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
        "--opset", type=int, default=18, help="ONNX opset version (onnx only, default: 18)"
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
    """Adds the `export` command to an argparse subparsers object; returns its parser.

    Examples:
    >>> parser = argparse.ArgumentParser(prog="keras-dml")
    >>> _ = add_export_parser(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["export", "m.keras", "--format", "onnx", "--output", "m.onnx"]).opset
    18
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


def check_export_args(args):
    """Refuses option combinations that cannot work; returns `--image-size` as `(h, w)` or `None`.

    Raises:
        ValueError: `--image-size` with more than two values, or `--input-dtype both` with
            `--format onnx`.
    """
    image_size = _image_size(args.image_size)
    if args.format == "onnx" and args.input_dtype == "both":
        raise ValueError(
            "--input-dtype both is for SavedModel only (an ONNX graph has one input type). "
            "Export two ONNX files, one with --input-dtype float32 and one with uint8."
        )
    return image_size


def _image_size(values):
    if not values:
        return None
    if len(values) > 2:
        raise ValueError(f"--image-size takes HEIGHT [WIDTH]. Received: {values}")
    return (values[0], values[-1])
