"""`keras-dml zoo ...`: list, inspect, download and publish zoo models.

The top-level `keras-dml` command wires these in with::

    from keras_dml.zoo.cli import add_zoo_parser, run_zoo
    add_zoo_parser(subparsers)          # adds `zoo list|info|download|publish`
    ...
    if args.command == "zoo":
        return run_zoo(args)

`python -m keras_dml.zoo.cli list` runs the same commands standalone.
"""

import argparse
import json
import sys

from keras_dml.zoo.errors import ZooError


def add_zoo_parser(subparsers):
    """Adds the `zoo` command and its sub-commands to an argparse subparsers object.

    Args:
        subparsers: the object returned by `parser.add_subparsers(...)`.

    Returns:
        The `zoo` `argparse.ArgumentParser`.

    Examples:
    >>> parser = argparse.ArgumentParser(prog="keras-dml")
    >>> sub = parser.add_subparsers(dest="command")
    >>> _ = add_zoo_parser(sub)
    >>> parser.parse_args(["zoo", "info", "tiny"]).zoo_command
    'info'
    """
    zoo = subparsers.add_parser(
        "zoo",
        help="pretrained models: list, info, download (verified), publish a run",
        description="Pretrained keras-dml models, verified by sha256 before use.",
    )
    commands = zoo.add_subparsers(dest="zoo_command", metavar="{list,info,download,publish}")
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

    publish = commands.add_parser(
        "publish", help="write a card + files from a run dir (model.keras, metrics.json)"
    )
    publish.add_argument("run_dir", help="training run directory")
    publish.add_argument("--name", help="model name (default: config name or folder name)")
    publish.add_argument("--output", default="models", help="output folder (default: models)")
    publish.add_argument("--base-url", help="upload URL prefix; files get <base>/<name>/<file>")
    publish.add_argument("--method", help="method (default: from config.json)")
    publish.add_argument("--backbone", help="backbone (default: from config.json)")
    publish.add_argument("--dataset", help="training dataset (default: from config.json)")
    publish.add_argument("--protocol", help="train/test protocol (default: known per dataset)")
    publish.add_argument("--recipe", help="training recipe path")
    publish.add_argument("--metrics-command", help="command that measured the metrics")
    publish.add_argument("--license", default="Apache-2.0", help="licence of the weights")
    publish.add_argument(
        "--model-file", default="model.keras", help="model file in RUN_DIR (default: model.keras)"
    )
    publish.add_argument("--overwrite", action="store_true", help="replace an existing card")
    return zoo


def _format_metrics(values, limit=3):
    items = list(values.items())[:limit]
    return " ".join(f"{key}={value:.4g}" for key, value in items) or "-"


def _print_list(summaries, as_json, out):
    if as_json:
        json.dump(summaries, out, indent=2)
        out.write("\n")
        return
    if not summaries:
        out.write("No model cards found (set KERAS_DML_MODELS_DIR to a folder of cards).\n")
        return
    rows = [
        (
            s["name"],
            s["status"],
            s["method"],
            s["backbone"],
            s["dataset"],
            _format_metrics(s["metrics"]),
        )
        for s in summaries
    ]
    header = ("NAME", "STATUS", "METHOD", "BACKBONE", "DATASET", "METRICS")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row[:-1], widths)]
        out.write("  ".join([*cells, str(row[-1])]) + "\n")


def _run(args, out):
    from keras_dml import zoo

    if args.zoo_command == "list":
        status = args.status.replace("-", " ") if args.status else None
        _print_list(zoo.list_models(status=status), args.json, out)
    elif args.zoo_command == "info":
        card = zoo.get_card(args.name)
        json.dump(card.data, out, indent=2)
        out.write(f"\n# card: {card.source}\n")
    elif args.zoo_command == "download":
        options = dict(
            cache_dir=args.cache_dir,
            progress=False if args.no_progress else None,
            max_attempts=args.attempts,
        )
        if args.all:
            paths = zoo.download_all(args.name, **options)
        else:
            path = zoo.download(args.name, **options)
            paths = {path.name: path}
        for filename, path in paths.items():
            out.write(f"{filename}\t{path}\n")
    elif args.zoo_command == "publish":
        card_path = zoo.publish_run(
            args.run_dir,
            args.output,
            name=args.name,
            base_url=args.base_url,
            method=args.method,
            backbone=args.backbone,
            dataset=args.dataset,
            protocol=args.protocol,
            recipe=args.recipe,
            metrics_command=args.metrics_command,
            license=args.license,
            model_file=args.model_file,
            overwrite=args.overwrite,
        )
        card = json.loads(card_path.read_text(encoding="utf-8"))
        out.write(f"Wrote {card_path}\n")
        for entry in card["files"]:
            where = entry.get("url", "(no url: upload it and add 'url', or pass --base-url)")
            out.write(
                f"  {entry['path']}  sha256={entry['sha256']}  size={entry['size']}  -> {where}\n"
            )
    return 0


def run_zoo(args, out=None, err=None):
    """Runs a parsed `zoo` command; returns the process exit code.

    Args:
        args: `argparse.Namespace` from a parser extended by `add_zoo_parser`.
        out: text stream for results. Defaults to `sys.stdout`.
        err: text stream for errors. Defaults to `sys.stderr`.

    Returns:
        int: 0 on success, 1 on a zoo, file or validation error (message on `err`).
    """
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        return _run(args, out)
    except (ZooError, FileNotFoundError, FileExistsError, ValueError, TimeoutError) as error:
        err.write(f"keras-dml: error: {error}\n")
        return 1


def main(argv=None):
    """Standalone entry point: `python -m keras_dml.zoo.cli list`."""
    parser = argparse.ArgumentParser(prog="keras-dml")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_zoo_parser(subparsers)
    return run_zoo(parser.parse_args(["zoo", *(sys.argv[1:] if argv is None else argv)]))


if __name__ == "__main__":
    sys.exit(main())
