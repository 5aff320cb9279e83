"""`keras-dml zoo ...`: list, inspect, download and publish zoo models."""

import json
import sys

from keras_dml import zoo
from keras_dml.zoo.errors import ZooError

__all__ = ["run_zoo"]


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
    """Runs a parsed `zoo` command; returns 0, or 1 on a zoo, file or validation error."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        return _run(args, out)
    except (ZooError, FileNotFoundError, FileExistsError, ValueError, TimeoutError) as error:
        err.write(f"keras-dml: error: {error}\n")
        return 1
