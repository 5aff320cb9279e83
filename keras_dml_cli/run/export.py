"""`keras-dml export MODEL --format saved_model|onnx --output PATH`."""

import sys

from keras_dml import zoo
from keras_dml.export.contract import ExportError
from keras_dml.export.onnx_model import export_onnx
from keras_dml.export.output_path import check_output_path
from keras_dml.export.report import ExportParityError
from keras_dml.export.saved_model import export_saved_model
from keras_dml.utils import MissingDependencyError
from keras_dml_cli.arguments.export import (
    check_export_args,
)

__all__ = ["export_from_args", "load_model", "run_export"]


def load_model(name_or_path):
    """Loads the MODEL argument through the zoo (names, presets, cards, `.keras` files)."""
    return zoo.load(name_or_path, compile=False)


def export_from_args(args, model=None):
    """Runs the export that parsed `args` describe (on `model` if loaded); returns its report."""
    # Everything the command line can get wrong fails here, before the model loads.
    image_size = check_export_args(args)
    check_output_path(args.output, "directory" if args.format == "saved_model" else "file")
    if model is None:
        model = load_model(args.model)
    options = {"image_size": image_size, "verify": not args.no_verify, "atol": args.atol}
    if args.format == "saved_model":
        return export_saved_model(model, args.output, input_dtype=args.input_dtype, **options)
    return export_onnx(
        model, args.output, opset=args.opset, input_dtype=args.input_dtype, **options
    )


def run_export(args, out=None, err=None):
    """Executes `keras-dml export`; returns 0, or 1 after printing the failure to `err`."""
    out = out or sys.stdout
    err = err or sys.stderr
    expected = (
        ExportError,
        ExportParityError,
        MissingDependencyError,
        zoo.ZooError,
        FileExistsError,
        OSError,
    )
    try:
        report = export_from_args(args)
    except (*expected, ValueError) as error:
        print(f"keras-dml: error: {error}", file=err)
        return 1
    print(report.to_json() if args.json else str(report), file=out)
    return 0
