"""The reality-check table (issue 31): every loss with the baseline, next to PML's implementation.

Generated from the accuracy benchmark's records (`benchmarks/accuracy.py`, one JSON line per
trained row and seed), never typed by hand. For each loss family of `accuracy_rows.LOSSES`:

- keras-dml's `baseline/<loss>` row and PyTorch + pytorch-metric-learning's `pml/<loss>` row
  (same backbone architecture, batches and budget; `torch_reference.py`), mean R@1 and MAP@R
  over the seeds both have, and their signed difference (keras-dml - PML);
- with cross-batch memory: the `baseline/<loss>+xbm` row next to the same loss without it, on
  their shared seeds;
- re-ranking: for the row with the best mean R@1, the metrics each query-time re-ranking gives
  (`metrics_rerank` of its records), next to none.

A cell stays empty (`-`) when its row has no record; the seeds column says which seeds each mean
is over, so a one-seed cell is visible as such.

Usage:
    python benchmarks/reality_check_table.py benchmarks/results/accuracy_hangul.jsonl \
        benchmarks/results/reality_check_hangul.jsonl
    python benchmarks/reality_check_table.py runs/accuracy/results.jsonl --markdown
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accuracy_rows import LOSSES, PML_RECIPES  # noqa: E402
from accuracy_table import read_records  # noqa: E402

XBM_SUFFIX = "+xbm"
METRICS = ("recall@1", "map@r")


def loss_families():
    """The loss families of the table: `LOSSES` without the cross-batch-memory variants."""
    return [name for name in LOSSES if not name.endswith(XBM_SUFFIX)]


def mean_on_seeds(records, seeds):
    """`{metric: mean}` of `records` restricted to `seeds` (all of them when `seeds` is None)."""
    chosen = [r for r in records if seeds is None or r["seed"] in seeds]
    if not chosen:
        return None
    return {m: float(np.mean([r["metrics"][m] for r in chosen])) for m in METRICS}


def paired(rows, left, right):
    """Means of rows `left` and `right` on their shared seeds: `(left, right, seeds)`.

    With no shared seed, each side is its mean over its own seeds (or `None` when it has no
    record) and `seeds` is empty, so no difference is taken.
    """
    a, b = rows.get(left, []), rows.get(right, [])
    seeds = sorted({r["seed"] for r in a} & {r["seed"] for r in b})
    if seeds:
        return mean_on_seeds(a, seeds), mean_on_seeds(b, seeds), seeds
    return mean_on_seeds(a, None), mean_on_seeds(b, None), []


def loss_rows(rows):
    """One dict per loss family: keras-dml and PML means, XBM on and off, and the seeds."""
    table = []
    for loss in loss_families():
        keras_dml, pml, seeds = paired(rows, f"baseline/{loss}", f"pml/{loss}")
        with_xbm, without_xbm, xbm_seeds = paired(
            rows, f"baseline/{loss}{XBM_SUFFIX}", f"baseline/{loss}"
        )
        table.append(
            {
                "loss": loss,
                "keras_dml": keras_dml,
                "pml": pml if loss in PML_RECIPES else None,
                "seeds": seeds,
                "keras_dml_seeds": sorted({r["seed"] for r in rows.get(f"baseline/{loss}", [])}),
                "xbm": with_xbm,
                "no_xbm": without_xbm if with_xbm else None,
                "xbm_seeds": xbm_seeds,
            }
        )
    return table


def latest_per_seed(paths):
    """`{row: [record, ...]}` of the records in `paths` (read in order), keeping the last record
    of each row and seed: a row measured again (e.g. with `--rerank`) replaces its older record
    instead of counting its seed twice."""
    latest = {}
    for path in paths:
        for row, records in read_records(path).items():
            for record in records:
                latest[(row, record["seed"])] = record
    rows = {}
    for (row, _), record in latest.items():
        rows.setdefault(row, []).append(record)
    return rows


def rerank_rows(rows):
    """`(row name, seeds, [(rerank name, means), ...])` for the keras-dml row with the best mean
    R@1 among its records that carry re-ranked metrics (only those records count), or `None`
    when no record does."""
    candidates = {}
    for key, records in rows.items():
        reranked = [r for r in records if "metrics_rerank" in r]
        if not key.startswith("pml/") and reranked:
            candidates[key] = reranked
    if not candidates:
        return None
    best = max(candidates, key=lambda k: mean_on_seeds(candidates[k], None)["recall@1"])
    records = candidates[best]
    names = sorted(set.intersection(*(set(r["metrics_rerank"]) for r in records)))
    result = [("none", mean_on_seeds(records, None))]
    for name in names:
        means = {
            m: float(np.mean([r["metrics_rerank"][name][m] for r in records])) for m in METRICS
        }
        result.append((name, means))
    return best, sorted({r["seed"] for r in records}), result


def _cell(means, metric):
    return "-" if means is None else f"{means[metric]:.3f}"


def _difference(left, right, metric):
    if left is None or right is None:
        return "-"
    return f"{left[metric] - right[metric]:+.3f}"


def format_table(rows, markdown=False):
    """The table as text lines (GitHub markdown when `markdown`)."""
    header = [
        "loss",
        "keras-dml R@1",
        "PML R@1",
        "diff",
        "keras-dml MAP@R",
        "PML MAP@R",
        "diff",
        "seeds",
        "+XBM R@1",
        "diff",
        "+XBM MAP@R",
        "diff",
        "XBM seeds",
    ]
    body = []
    for entry in loss_rows(rows):
        keras_dml, pml = entry["keras_dml"], entry["pml"]
        xbm, no_xbm = entry["xbm"], entry["no_xbm"]
        seeds = entry["seeds"] or entry["keras_dml_seeds"]
        body.append(
            [
                entry["loss"],
                _cell(keras_dml, "recall@1"),
                _cell(pml, "recall@1"),
                _difference(keras_dml, pml, "recall@1") if entry["seeds"] else "-",
                _cell(keras_dml, "map@r"),
                _cell(pml, "map@r"),
                _difference(keras_dml, pml, "map@r") if entry["seeds"] else "-",
                ",".join(map(str, seeds)) or "-",
                _cell(xbm, "recall@1"),
                _difference(xbm, no_xbm, "recall@1") if entry["xbm_seeds"] else "-",
                _cell(xbm, "map@r"),
                _difference(xbm, no_xbm, "map@r") if entry["xbm_seeds"] else "-",
                ",".join(map(str, entry["xbm_seeds"])) or "-",
            ]
        )
    lines = _render(header, body, markdown)
    reranked = rerank_rows(rows)
    if reranked is not None:
        best, seeds, results = reranked
        lines.append("")
        lines.append(f"Re-ranking the best row, {best} (seeds {','.join(map(str, seeds))}):")
        lines.append("")
        none = results[0][1]
        body = [
            [
                name,
                _cell(means, "recall@1"),
                _difference(means, none, "recall@1"),
                _cell(means, "map@r"),
                _difference(means, none, "map@r"),
            ]
            for name, means in results
        ]
        lines += _render(["re-ranking", "R@1", "diff", "MAP@R", "diff"], body, markdown)
    return lines


def _render(header, body, markdown):
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return lines + ["| " + " | ".join(row) + " |" for row in body]
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]
    return [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths))
        for row in [header, *body]
    ]


def build_parser():
    """The command line of this script (also read by the docs' command checks)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "results",
        nargs="+",
        help="results.jsonl files of benchmarks/accuracy.py (a later record of a row and seed "
        "replaces an earlier one)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    print("\n".join(format_table(latest_per_seed(args.results), markdown=args.markdown)))


if __name__ == "__main__":
    main()
