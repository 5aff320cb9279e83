"""`keras-dml zoo`'s arguments: list, info, download, load, publish, convert, push."""

import argparse  # noqa: F401 (the doctest's)


def add_zoo_parser(subparsers):
    """Adds the `zoo` command and its sub-commands to an argparse subparsers object.

    Examples:
    >>> parser = argparse.ArgumentParser(prog="keras-dml")
    >>> _ = add_zoo_parser(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["zoo", "info", "tiny"]).zoo_command
    'info'
    """
    zoo = subparsers.add_parser(
        "zoo",
        help="pretrained models: list, info, download, load (verified); publish, convert, push",
        description="Pretrained keras-dml models, verified by sha256 before use.",
    )
    commands = zoo.add_subparsers(
        dest="zoo_command", metavar="{list,info,download,load,publish,convert,push}"
    )
    commands.required = True

    list_parser = commands.add_parser("list", help="list model cards")
    list_parser.add_argument(
        "--status", choices=["published", "not-published"], help="show only this status"
    )
    list_parser.add_argument("--json", action="store_true", help="print JSON")

    info = commands.add_parser("info", help="show a model card")
    info.add_argument("name", help="model name")

    download = commands.add_parser("download", help="download and verify a model's files")
    download.add_argument("name", help="model name")
    download.add_argument("--all", action="store_true", help="every file, not just the model")
    download.add_argument("--cache-dir", help="cache folder (default: $KERAS_HOME/keras_dml/zoo)")
    download.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    download.add_argument("--attempts", type=int, default=5, help="attempts per source")

    load = commands.add_parser("load", help="load a model, check its card, print its shapes")
    load.add_argument(
        "preset", help="zoo name, preset folder, card, .keras file, hf:// or kaggle:// handle"
    )
    load.add_argument("--json", action="store_true", help="print JSON")

    publish = commands.add_parser(
        "publish", help="write a card + files from a run dir (model.keras, metrics.json)"
    )
    publish.add_argument("run_dir", help="training run directory")
    publish.add_argument("--output", default="model_zoo", help="output folder (default: model_zoo)")
    publish.add_argument("--base-url", help="upload URL prefix; files get <base>/<name>/<file>")
    _add_run_options(publish)
    publish.add_argument("--overwrite", action="store_true", help="replace an existing card")

    convert = commands.add_parser(
        "convert", help="write a hub preset folder from a zoo entry, card or run dir"
    )
    convert.add_argument("source", help="zoo model name, card .json or training run directory")
    convert.add_argument("folder", help="the preset folder to write")
    _add_run_options(convert)
    convert.add_argument("--overwrite", action="store_true", help="replace an existing preset")

    push = commands.add_parser(
        "push", help="upload a run dir, hub preset folder or zoo entry to hf:// or kaggle://"
    )
    push.add_argument("source", help="training run directory, hub preset folder or zoo name")
    push.add_argument("handle", help="hf://OWNER/NAME or kaggle://OWNER/MODEL/keras/VARIANT")
    _add_run_options(push)
    return zoo


RUN_OPTIONS = (
    "name",
    "method",
    "backbone",
    "dataset",
    "protocol",
    "recipe",
    "metrics_command",
    "license",
    "model_file",
)


def _add_run_options(parser):
    """The card fields a training run folder cannot give itself (defaults: its config.json)."""
    parser.add_argument("--name", help="model name (default: config name or folder name)")
    parser.add_argument("--method", help="method (default: from config.json)")
    parser.add_argument("--backbone", help="backbone (default: from config.json)")
    parser.add_argument("--dataset", help="training dataset (default: from config.json)")
    parser.add_argument("--protocol", help="train/test protocol (default: known per dataset)")
    parser.add_argument("--recipe", help="training recipe path")
    parser.add_argument("--metrics-command", help="command that measured the metrics")
    parser.add_argument("--license", default="Apache-2.0", help="licence of the weights")
    parser.add_argument(
        "--model-file", default="model.keras", help="model file in RUN_DIR (default: model.keras)"
    )
