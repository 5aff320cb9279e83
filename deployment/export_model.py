"""Export a keras-dml model to SavedModel and/or ONNX in one scripted step, with a manifest.

For pipelines (CI, release jobs): loads the model once, writes every requested artifact into
`--output-dir`, verifies each against the Keras model and writes `export_manifest.json` with the
reports (shapes, input dtypes, variable counts, parity). Exits non-zero on any failure.

Examples:
    python deployment/export_model.py runs/cub/model.keras --output-dir dist/cub
    python deployment/export_model.py digits_dc_convnet --output-dir dist --formats onnx \\
        --input-dtype uint8 --opset 18

Writes `dist/cub/saved_model/`, `dist/cub/model.onnx` and `dist/cub/export_manifest.json`.
"""

import argparse
import json
import os
import sys


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="a .keras file, a zoo preset directory/card or a zoo name")
    parser.add_argument("--output-dir", required=True, help="folder for the artifacts")
    parser.add_argument(
        "--formats",
        nargs="+",
        default=["saved_model", "onnx"],
        choices=["saved_model", "onnx"],
        help="artifacts to write (default: both)",
    )
    parser.add_argument(
        "--input-dtype",
        default="float32",
        choices=["float32", "uint8", "both"],
        help="`images` dtype; `both` gives the SavedModel two signatures and writes two ONNX "
        "files (model.onnx float32, model_uint8.onnx)",
    )
    parser.add_argument("--opset", type=int, default=18, help="ONNX opset (default 18)")
    parser.add_argument("--image-size", type=int, nargs="+", metavar="SIZE", help="HEIGHT [WIDTH]")
    parser.add_argument("--atol", type=float, default=1e-5, help="parity tolerance (1e-5)")
    parser.add_argument("--no-verify", action="store_true", help="skip parity checks")
    return parser


def export_all(args):
    """Runs every export `args` asks for and returns the list of report dicts."""
    from keras_dml.export import export_onnx, export_saved_model
    from keras_dml_cli.run.export import load_model

    model = load_model(args.model)
    size = None if not args.image_size else (args.image_size[0], args.image_size[-1])
    options = {"image_size": size, "verify": not args.no_verify, "atol": args.atol}
    os.makedirs(args.output_dir, exist_ok=True)
    reports = []
    if "saved_model" in args.formats:
        path = os.path.join(args.output_dir, "saved_model")
        reports.append(export_saved_model(model, path, input_dtype=args.input_dtype, **options))
    if "onnx" in args.formats:
        dtypes = ["float32", "uint8"] if args.input_dtype == "both" else [args.input_dtype]
        for dtype in dtypes:
            suffix = "_uint8" if dtype == "uint8" and len(dtypes) > 1 else ""
            path = os.path.join(args.output_dir, f"model{suffix}.onnx")
            reports.append(export_onnx(model, path, opset=args.opset, input_dtype=dtype, **options))
    return [report.to_dict() for report in reports]


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.image_size and len(args.image_size) > 2:
        print(f"error: --image-size takes HEIGHT [WIDTH]; got {args.image_size}", file=sys.stderr)
        return 2
    try:
        reports = export_all(args)
    except (ValueError, OSError, ImportError, AssertionError) as error:
        print(f"export failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    manifest = os.path.join(args.output_dir, "export_manifest.json")
    with open(manifest, "w", encoding="utf-8") as handle:
        json.dump({"model": args.model, "artifacts": reports}, handle, indent=2)
    for report in reports:
        print(f"{report['format']}: {report['path']} parity {report['max_abs_diff']}")
    print(f"manifest: {manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
