"""The `keras-dml` command: train, evaluate, report, export, zoo, demo and search."""

import argparse
import json
import os
import sys
import warnings

# Quiet TensorFlow's C++ start-up logging for a command-line tool (users can override it).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

EXPECTED_ERRORS = (ValueError, ImportError, OSError, KeyError)
ERROR_PREFIX = "keras-dml: error:"

# The registered datasets (`keras_dml.data.list_datasets()`), written out so that building the
# parser imports no TensorFlow; tests/test_cli_errors.py checks that the list is complete.
DATASET_NAMES = (
    "digits",
    "fashion_mnist",
    "hangul",
    "cub200",
    "cars196",
    "sop",
    "inshop",
    "vehicleid",
    "image_folder",
    "tfds:caltech_birds2011",
    "tfds:cars196",
    "tfds:stanford_online_products",
)


def error_message(error):
    """The one-line message printed for an expected error (`keras-dml: error: ...`)."""
    message = str(error.args[0]) if isinstance(error, KeyError) and error.args else str(error)
    message = " ".join(message.strip().split()) or error.__class__.__name__
    return f"{ERROR_PREFIX} {message}"


class _Parser(argparse.ArgumentParser):
    """An `ArgumentParser` whose usage errors (every subcommand's too) start `keras-dml: error:`."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, f"{ERROR_PREFIX} {message}\n")


def _plugins(argv):
    """The `--plugin MODULE` values in `argv` (repeatable; `--plugin=MODULE` works too)."""
    modules = []
    for i, arg in enumerate(argv):
        if arg == "--plugin" and i + 1 < len(argv):
            modules.append(argv[i + 1])
        elif arg.startswith("--plugin="):
            modules.append(arg.split("=", 1)[1])
    return modules


def load_plugins(modules):
    """Imports user modules that register methods with `@keras_dml.models.register_method`."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            raise ValueError(
                f"Cannot import the plugin module {module!r} ({error}). Put its folder on "
                "PYTHONPATH or install it. Received: --plugin " + module
            ) from error


def _methods_epilog():
    """`keras-dml train --help`'s table of the registered methods (plug-ins included)."""
    from keras_dml.models import list_methods

    rows = [f"  {name:<10} {text}" for name, text in list_methods(verbose=True).items()]
    return "methods (--method):\n" + "\n".join(rows)


def _add_train_parser(subparsers, with_methods=False):
    parser = subparsers.add_parser(
        "train",
        help="train a model with model.fit and evaluate it on the test split",
        description=(
            "Train with model.fit, keep the best model on validation MAP@R (best.keras), "
            "evaluate the final model on the test split. Settings not given are fitted to the "
            "data: batches of about 64 images from up to 16 classes, and for D&C / hierarchical "
            "D&C at most (training classes / 2) learners. Running the same command again "
            "resumes an interrupted run."
        ),
        epilog=_methods_epilog() if with_methods else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--config", help="JSON run configuration (see training/configs/)")
    parser.add_argument("--method", help="training method (listed below), e.g. baseline, dc, bier")
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first; its @register_method methods become trainable (repeatable)",
    )
    parser.add_argument(
        "--dataset",
        help=f"dataset name: {', '.join(DATASET_NAMES)} (image_folder and the official "
        "layouts read --data-dir)",
    )
    parser.add_argument("--data-dir", help="folder holding the dataset in its official layout")
    parser.add_argument(
        "--backbone",
        help=(
            "backbone name (default vgg_small; convnet is cheaper per step; resnet50, "
            "googlenet, bn_inception have ImageNet weights)"
        ),
    )
    parser.add_argument("--weights", help="backbone weights: 'imagenet' or a weights file")
    parser.add_argument(
        "--image-size",
        type=int,
        metavar="PIXELS",
        help="side of the square images the model is trained on (default: 32)",
    )
    parser.add_argument(
        "--augmentation",
        help="training augmentation: none, flip, crop, crop_flip, resized_crop, "
        "resized_crop_flip (default: the dataset's own, crop_flip for image files such as "
        "cub200 / cars196 / sop / inshop / vehicleid / tfds:* / image_folder, none for "
        "in-memory images such as digits / fashion_mnist / hangul)",
    )
    parser.add_argument("--embedding-dim", type=int, help="size of the (total) embedding")
    parser.add_argument(
        "--num-learners",
        type=int,
        help="learners of an ensemble method (K; hierarchical D&C: max_learners)",
    )
    parser.add_argument("--epochs", type=int, help="training epochs (default: 10)")
    parser.add_argument(
        "--batch-size", type=int, help="images per batch (default: fitted to the data, ~64)"
    )
    parser.add_argument(
        "--m-per-class",
        type=int,
        help="images per class in a batch (default: fitted to the data, >= 4)",
    )
    parser.add_argument("--learning-rate", type=float, help="optimizer learning rate")
    parser.add_argument("--seed", type=int, help="random seed (also of the validation split)")
    parser.add_argument(
        "--strategy",
        choices=("default", "mirrored", "multi_worker", "data_parallel"),
        help="distribution: default (one device), mirrored (every local GPU/CPU device), "
        "multi_worker (the workers of TF_CONFIG), data_parallel (JAX: local devices)",
    )
    parser.add_argument(
        "--precision",
        choices=("float32", "mixed_float16", "mixed_bfloat16"),
        help="Keras dtype policy of the model (default float32; mixed_* compute in 16 bits "
        "with float32 weights, losses and embeddings)",
    )
    parser.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override any configuration key, dotted for nested ones "
        "(--set model.num_learners=2 --set method_options.recluster_every=3)",
    )
    parser.add_argument("--output", required=True, help="run folder (model.keras, metrics.json...)")
    parser.add_argument("--quiet", action="store_true", help="no per-epoch progress")
    parser.add_argument(
        "--no-report", action="store_true", help="skip RUN_DIR/report.html (see `report`)"
    )


def _add_evaluate_parser(subparsers):
    parser = subparsers.add_parser("evaluate", help="retrieval metrics of a saved model")
    parser.add_argument("model", help="a .keras file, a zoo preset folder or a zoo model name")
    parser.add_argument("--dataset", required=True, help="dataset name, e.g. digits")
    parser.add_argument("--data-dir", help="folder holding the dataset in its official layout")
    parser.add_argument("--split", default="test", help="test (default), val, or query (In-shop)")
    parser.add_argument("--batch-size", type=int, default=64, help="embedding batch size")
    parser.add_argument("--seed", type=int, default=0, help="seed of the validation class split")
    parser.add_argument("--json", action="store_true", help="print the metrics as one JSON object")


def _add_demo_parser(subparsers, with_methods=False):
    if with_methods:
        from keras_dml.demo import demo_methods

        names = ",".join(demo_methods())
        methods_help = f"comma-separated subset of: {names} (default: all)"
    else:
        methods_help = "comma-separated subset of the methods (keras-dml demo --help lists them)"
    parser = subparsers.add_parser(
        "demo", help="train every method briefly on the embedded digits data, compare, export"
    )
    parser.add_argument("--output", default="demo_output", help="folder for the demo's files")
    parser.add_argument("--epochs", type=int, help="epochs per method (default: the demo's own)")
    parser.add_argument("--methods", help=methods_help)


def _add_report_parser(subparsers):
    parser = subparsers.add_parser(
        "report", help="write a run folder's HTML report (metrics, curves, retrieval, projection)"
    )
    parser.add_argument("run_dir", help="a run folder written by `keras-dml train`")
    parser.add_argument("--output", help="where to write the page (default RUN_DIR/report.html)")
    parser.add_argument("--queries", type=int, default=16, help="queries in the retrieval grid")
    parser.add_argument("--points", type=int, default=500, help="test images sampled")
    parser.add_argument("-k", type=int, default=5, help="neighbours per query")


def _run_report(args):
    from keras_dml.visualization.report import describe_report, write_report

    path = write_report(
        args.run_dir,
        output=args.output,
        num_queries=args.queries,
        max_points=args.points,
        k=args.k,
    )
    print(describe_report(path, args.run_dir))
    return 0


def _config_from_args(args):
    from keras_dml.models.config import merge_overrides, parse_overrides
    from keras_dml.training import get_method, load_config, resolve_config

    overrides = {}
    for key in (
        "method",
        "dataset",
        "data_dir",
        "image_size",
        "augmentation",
        "epochs",
        "batch_size",
        "m_per_class",
        "seed",
        "strategy",
        "precision",
    ):
        value = getattr(args, key)
        if value is not None:
            overrides[key] = value
    nested = {
        ("backbone", "name"): args.backbone,
        ("backbone", "weights"): args.weights,
        ("model", "embedding_dim"): args.embedding_dim,
        ("optimizer", "learning_rate"): args.learning_rate,
    }
    for (entry, key), value in nested.items():
        if value is not None:
            overrides.setdefault(entry, {})[key] = value
    if args.num_learners is not None:
        if not (args.config or args.method):
            raise ValueError("--num-learners needs --method or --config.")
        method = args.method or load_config(args.config)["method"]
        option = get_method(method).learners_option
        overrides.setdefault("model", {})[option] = args.num_learners
    overrides = merge_overrides(overrides, parse_overrides(args.set))
    if args.config:
        return load_config(args.config, overrides)
    return resolve_config(overrides)


def _run_train(args):
    from keras_dml.training import train

    config = _config_from_args(args)
    result = train(config, args.output, verbose=0 if args.quiet else 2, report=not args.no_report)
    print(json.dumps(result["metrics"], indent=2))
    if result.get("output_dir", args.output) != args.output:  # a non-chief worker
        print(f"Not the chief worker: the chief saves {os.path.join(args.output, 'model.keras')}")
    else:
        print(f"Saved {os.path.join(args.output, 'model.keras')}")
    return 0


def _run_evaluate(args):
    from keras_dml import zoo
    from keras_dml.data import load_dataset
    from keras_dml.training import evaluate_model

    try:
        model = zoo.load(args.model)
    except zoo.ZooError as error:
        raise ValueError(str(error.args[0]) if error.args else str(error)) from error
    shape = getattr(model, "image_shape", None) or model.input_shape[1:]
    image_size = int(shape[0]) if shape[0] else None

    def load(split):
        return load_dataset(
            args.dataset, split=split, data_dir=args.data_dir, image_size=image_size, seed=args.seed
        )

    if args.split in ("query", "gallery"):
        splits = {"query": load("query"), "gallery": load("gallery")}
    else:
        splits = {"test": load(args.split)}
    metrics = evaluate_model(model, splits, batch_size=args.batch_size, image_size=image_size)
    metrics = {k: (v.item() if hasattr(v, "item") else v) for k, v in metrics.items()}
    if args.json:
        print(json.dumps(metrics))
    else:
        for key, value in metrics.items():
            print(f"{key:>16}: {value:.4f}" if isinstance(value, float) else f"{key:>16}: {value}")
    return 0


def _run_demo(args):
    from keras_dml.demo import run_demo

    methods = args.methods.split(",") if args.methods else None
    run_demo(args.output, methods=methods, epochs=args.epochs)
    return 0


def build_parser(argv=None):
    """The argument parser of `keras-dml` (also used to document the CLI).

    Args:
        argv: list of str or `None`. The command line; for `train` the `--plugin` modules are
            imported first so that `keras-dml train --help` lists their methods too.
    """
    from keras_dml.export.cli import add_export_parser
    from keras_dml.search.cli import add_search_parser
    from keras_dml.zoo.cli import add_zoo_parser

    parser = _Parser(prog="keras-dml", description="Ensemble deep metric learning for Keras 3.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    # Only `train` and `demo` list the registered methods (importing TensorFlow): `keras-dml
    # --help` and the other commands answer at once.
    is_train = bool(argv) and argv[0] == "train"
    if is_train:
        load_plugins(_plugins(argv))
    _add_train_parser(subparsers, with_methods=is_train)
    _add_evaluate_parser(subparsers)
    _add_demo_parser(subparsers, with_methods=bool(argv) and argv[0] == "demo")
    _add_report_parser(subparsers)
    add_export_parser(subparsers)
    add_zoo_parser(subparsers)
    add_search_parser(subparsers)
    return parser


def _print_warning(message, category, filename, lineno, file=None, line=None):
    """Shows a warning as one `keras-dml: warning:` line (no source path)."""
    print(f"keras-dml: warning: {message}", file=sys.stderr, flush=True)


def main(argv=None):
    """Entry point of the `keras-dml` console script. Returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
    except ValueError as error:
        print(error_message(error), file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    warnings.showwarning = _print_warning
    runners = {
        "train": _run_train,
        "evaluate": _run_evaluate,
        "demo": _run_demo,
        "report": _run_report,
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
        return 2


if __name__ == "__main__":
    sys.exit(main())
