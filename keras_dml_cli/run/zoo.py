"""`keras-dml zoo ...`: list, inspect, download, load, publish, convert and push zoo models."""

import json
import sys
from pathlib import Path

from keras_dml import zoo
from keras_dml.zoo.errors import ZooError
from keras_dml_cli.arguments.zoo import RUN_OPTIONS

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


def _run_options(args, source):
    """The run-folder options given on the command line; refused for any other source."""
    given = {key: getattr(args, key) for key in RUN_OPTIONS}
    if (Path(source) / "metrics.json").is_file():
        return given
    defaults = {"license": "Apache-2.0", "model_file": "model.keras"}
    named = [key for key, value in given.items() if value not in (None, defaults.get(key))]
    if named:
        flags = ", ".join("--" + key.replace("_", "-") for key in named)
        raise ValueError(
            f"{flags} only apply to a training run folder, and {source} is not one (no "
            "metrics.json): a zoo entry or preset keeps its own card, so drop them."
        )
    return {}


def _shapes(model, card):
    import numpy as np

    shape = getattr(model, "image_shape", None)
    if shape is None:
        shape = tuple(model.input_shape[1:])
    if None in shape and card is not None:
        preprocessing = card.data["preprocessing"]
        shape = (*preprocessing["input_size"], preprocessing.get("channels", 3))
    output = model(np.zeros((1, *shape), "float32"))
    return [None, *map(int, shape)], [None, *map(int, output.shape[1:])]


def _print_loaded(preset, as_json, out):
    model, card = zoo.load_with_card(preset)
    input_shape, output_shape = _shapes(model, card)
    summary = card.summary() if card is not None else {"card": None}
    summary["files"] = {e["filename"]: e["sha256"] for e in card.files} if card else {}
    summary.update(input_shape=input_shape, output_shape=output_shape)
    if as_json:
        json.dump(summary, out, indent=2)
        out.write("\n")
        return
    if card is None:
        out.write(f"{preset}: a .keras file without a card (nothing to check it against)\n")
    else:
        out.write(f"{card.name}: {card.data['method']} on {card.data['backbone']}, trained on ")
        out.write(f"{card.data['training']['dataset']}; card {card.source}\n")
        out.write(f"  metrics: {_format_metrics(summary['metrics'], limit=4)}\n")
        for filename, sha256 in summary["files"].items():
            out.write(f"  checked {filename}  sha256={sha256}\n")
    out.write(f"  input {tuple(input_shape)} -> output {tuple(output_shape)}\n")


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
    elif args.zoo_command == "load":
        _print_loaded(args.preset, args.json, out)
    elif args.zoo_command == "convert":
        options = _run_options(args, args.source)
        if options:
            folder = zoo.save_hub_preset(
                args.source, args.folder, overwrite=args.overwrite, **options
            )
        else:
            folder = zoo.convert_zoo_entry(args.source, args.folder, overwrite=args.overwrite)
        out.write(f"Wrote the hub preset {folder}; check it with `keras-dml zoo load {folder}`\n")
    elif args.zoo_command == "push":
        zoo.push_hub_preset(args.source, args.handle, **_run_options(args, args.source))
        out.write(
            f"Pushed {args.source} to {args.handle}; load it: `keras-dml zoo load {args.handle}`\n"
        )
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
