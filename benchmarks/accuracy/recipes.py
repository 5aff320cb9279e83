"""Accuracy of every method's CPU recipe on an offline dataset, trained and tested in one run.

Runs `recipes/configs/<method>_<dataset>.json` for each method through `keras_dml.training.train`
(the same code as `keras-dml train`), each into `OUTPUT/<method>/`, then prints a table of the
test metrics (unseen classes), the best validation MAP@R and the training time, and writes it to
`OUTPUT/summary.json` and to the record the documentation's table is built from (`--record`,
default `benchmarks/results/recipes_<dataset>.json`, with the command and the machine). Every
recipe of one dataset shares the same budget (epochs, batch, optimizer, embedding size), so the
rows compare methods, not budgets.

Usage:
    python -m benchmarks.accuracy.recipes --dataset fashion_mnist --output runs/recipes
    python -m benchmarks.accuracy.recipes --dataset fashion_mnist --methods baseline,dc \
        --set epochs=1
"""

import argparse
import json
import os
import time

from benchmarks.records import RESULTS, write_record
from keras_dml.training.run_config import parse_overrides

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def recipe_methods():
    """Every registered method, baseline first (a new method needs only its recipe JSONs)."""
    from keras_dml.methods import list_methods

    return sorted(list_methods(), key=lambda name: name != "baseline")


def build_parser():
    """The command-line options (the README's commands are parsed with it in the tests)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="fashion_mnist")
    parser.add_argument("--methods", help="comma-separated subset (default: every method)")
    parser.add_argument("--output", default="runs/recipes")
    parser.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a key")
    parser.add_argument(
        "--record", help="JSON record (default benchmarks/results/recipes_<dataset>.json)"
    )
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)

    from keras_dml.training import RunConfig, load_splits, train

    rows, splits = [], None
    methods = args.methods.split(",") if args.methods else recipe_methods()
    for method in methods:
        path = os.path.join(ROOT, "recipes", "configs", f"{method}_{args.dataset}.json")
        if not os.path.isfile(path):
            if args.methods:  # named by the user: an error, not a silently shorter table
                parser.error(f"no recipe {path} for --methods {method}; pick one with a recipe")
            print(f"[recipes] no recipe {path}; skipping {method}", flush=True)
            continue
        config = RunConfig.from_json(path, parse_overrides(args.set))  # built once
        splits = splits or load_splits(config)
        print(f"[recipes] {method}: {config['epochs']} epochs ...", flush=True)
        start = time.perf_counter()
        run = train(config, os.path.join(args.output, method), verbose=0, splits=splits)
        metrics, history = run["metrics"], run["history"]
        rows.append(
            {
                "method": method,
                "recall@1": metrics["recall@1"],
                "recall@2": metrics["recall@2"],
                "map@r": metrics["map@r"],
                "nmi": metrics["nmi"],
                "best_val_map@r": max(history.get("val_map@r", [float("nan")])),
                "seconds": time.perf_counter() - start,
                "config": os.path.relpath(path, ROOT),
            }
        )
        print(json.dumps(rows[-1]), flush=True)

    header = (
        f"{'method':<9} {'R@1':>6} {'R@2':>6} {'MAP@R':>6} {'NMI':>6} {'val MAP@R':>9} {'time':>6}"
    )
    print(f"\n{args.dataset}: test split (unseen classes)\n{header}")
    for r in rows:
        print(
            f"{r['method']:<9} {r['recall@1']:>6.3f} {r['recall@2']:>6.3f} {r['map@r']:>6.3f} "
            f"{r['nmi']:>6.3f} {r['best_val_map@r']:>9.3f} {r['seconds']:>5.0f}s"
        )
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "summary.json"), "w") as f:
        json.dump({"dataset": args.dataset, "rows": rows}, f, indent=2)
    record = args.record or os.path.join(RESULTS, f"recipes_{args.dataset}.json")
    write_record(record, "accuracy.recipes", argv, None, rows, dataset=args.dataset)
    return rows


if __name__ == "__main__":
    main()
