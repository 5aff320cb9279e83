"""The same row and seed trained on two runtimes: how far the runtime moves a row's metrics.

keras-dml trains on TensorFlow, JAX and PyTorch, and the accuracy benchmark's rows ran on this
project's CPU machine (TensorFlow) and on a lent GPU machine (JAX; it has no TensorFlow). Each
backend draws other random numbers from the same seed (initial weights, augmentation), and their
kernels sum in other orders, so one row and seed trained on two runtimes gives two results. This
compares them: for each row and seed recorded on two runtimes, its metrics on each and their
difference, next to the same rows' seed-to-seed difference on one runtime, so a reader can see
whether mixing runtimes across a table's seeds moves its numbers more than its seeds do.

Inputs: the table's records (`reality_check_table.latest_per_seed` of its files) and a records
file of runs trained again on a second runtime, kept apart so each table keeps one record per
row and seed (`benchmarks/results/runtime_pairs_hangul.jsonl`).

Usage:
    python -m benchmarks.accuracy.runtime_pairs benchmarks/results/runtime_pairs_hangul.jsonl \
        benchmarks/results/accuracy_hangul.jsonl benchmarks/results/reality_check_hangul.jsonl
"""

import argparse

import numpy as np

from benchmarks.accuracy.reality_check_table import latest_per_seed, render_lines, runtime_of
from benchmarks.accuracy.table import read_records

METRICS = ("recall@1", "map@r")


def runtime_pairs(table_rows, second_rows):
    """`[dict]`, one per row and seed of `second_rows` that `table_rows` has on another runtime:
    `row`, `seed`, `runtimes` (table's, second's) and, per metric, `values` (the same order)
    and `difference` (second minus table's)."""
    pairs = []
    for row, records in second_rows.items():
        first = {r["seed"]: r for r in table_rows.get(row, [])}
        for second in records:
            other = first.get(second["seed"])
            if other is None or runtime_of(other) == runtime_of(second):
                continue
            pair = {
                "row": row,
                "seed": second["seed"],
                "runtimes": (runtime_of(other), runtime_of(second)),
            }
            for metric in METRICS:
                values = (other["metrics"][metric], second["metrics"][metric])
                pair[metric] = {"values": values, "difference": values[1] - values[0]}
            pairs.append(pair)
    return pairs


def seed_spread(table_rows, rows, metric):
    """The mean absolute seed 0 - seed 1 difference of `rows` within one runtime (the rows
    whose two seeds trained on the same runtime), or `None` when none has."""
    gaps = []
    for row in rows:
        by_seed = {r["seed"]: r for r in table_rows.get(row, [])}
        if {0, 1} <= set(by_seed) and runtime_of(by_seed[0]) == runtime_of(by_seed[1]):
            gaps.append(abs(by_seed[0]["metrics"][metric] - by_seed[1]["metrics"][metric]))
    return float(np.mean(gaps)) if gaps else None


def summary(table_rows, pairs, metric):
    """`(mean |runtime difference|, mean |seed difference|, pairs, rows with a seed spread)`
    of `metric` over `pairs` (`None` for a mean of nothing)."""
    rows = sorted({pair["row"] for pair in pairs})
    runtime = [abs(pair[metric]["difference"]) for pair in pairs]
    return (
        float(np.mean(runtime)) if runtime else None,
        seed_spread(table_rows, rows, metric),
        len(pairs),
        rows,
    )


def format_table(table_rows, pairs, markdown=False):
    """The pairs as text lines (GitHub markdown when `markdown`), then the two means."""
    header = ["row", "seed", "runtime", "MAP@R", "second runtime", "MAP@R", "difference"]
    header.append("R@1 diff")
    body = [
        [
            pair["row"],
            str(pair["seed"]),
            pair["runtimes"][0],
            f"{pair['map@r']['values'][0]:.3f}",
            pair["runtimes"][1],
            f"{pair['map@r']['values'][1]:.3f}",
            f"{pair['map@r']['difference']:+.3f}",
            f"{pair['recall@1']['difference']:+.3f}",
        ]
        for pair in pairs
    ]
    lines = render_lines(header, body, markdown)
    runtime, seeds, count, _ = summary(table_rows, pairs, "map@r")
    if count:
        seeds_text = "no row has both seeds on one runtime" if seeds is None else f"{seeds:.3f}"
        lines += [
            "",
            f"Mean |MAP@R difference| between runtimes: {runtime:.3f} over {count} pairs; "
            f"between seeds 0 and 1 of the same rows on one runtime: {seeds_text}.",
        ]
    return lines


def build_parser():
    """The command line of this script (also read by the docs' command checks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("second", help="results.jsonl of the runs trained on a second runtime")
    parser.add_argument(
        "results", nargs="+", help="the table's results.jsonl files (a later record replaces)"
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    table_rows = latest_per_seed(args.results)
    pairs = runtime_pairs(table_rows, read_records(args.second))
    print("\n".join(format_table(table_rows, pairs, markdown=args.markdown)))


if __name__ == "__main__":
    main()
