"""The reality-check table: every loss with the baseline, next to PML's implementation.

Generated from the accuracy benchmark's records (`benchmarks/accuracy/run.py`, one JSON line per
trained row and seed), never typed by hand. For each loss family of `rows.LOSSES`:

- keras-dml's `baseline/<loss>` row and PyTorch + pytorch-metric-learning's `pml/<loss>` row
  (same backbone architecture, batches and budget; `torch_reference.py`), mean R@1 and MAP@R
  over the seeds both have, and their signed difference (keras-dml - PML);
- with cross-batch memory: the `baseline/<loss>+xbm` row next to the same loss without it, on
  their shared seeds;
- re-ranking: for the row with the best mean R@1, the metrics each query-time re-ranking gives
  (`metrics_rerank` of its records), next to none.

A cell stays empty (`-`) when its row has no record, says `n/a` where the benchmark has no PML
row for the loss (`rows.PML_RECIPES`) and `diverged` where every recorded seed of the
row diverged (NaN or Inf embeddings, recorded with `diverged` by `run.py`). The seeds
column says which seeds each mean is over, so a one-seed cell is visible as such. A
cross-batch-memory difference is marked `*` when, on some shared seed, the rows with and without
memory trained on different runtimes (backend and device, e.g. TensorFlow on a CPU against JAX
on a GPU), and a keras-dml - PML difference `†` where PML's loss of that name is defined
otherwise (`rows.PML_DIFFERENT_DEFINITIONS`); a table of where the records trained
follows.

Usage:
    python -m benchmarks.accuracy.reality_check_table benchmarks/results/accuracy_hangul.jsonl \
        benchmarks/results/reality_check_hangul.jsonl
    python -m benchmarks.accuracy.reality_check_table runs/accuracy/results.jsonl --markdown
"""

import argparse

import numpy as np

from benchmarks.accuracy.rows import LOSSES, PML_DIFFERENT_DEFINITIONS, PML_RECIPES
from benchmarks.accuracy.table import read_runs, record_runtime

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


def runtime_of(record):
    """`"backend, device"` a record trained on (`table.record_runtime`)."""
    runtime = record_runtime(record)
    return f"{runtime['backend']}, {runtime['device']}"


def table_rows():
    """The rows the table shows: every family's baseline and PML rows and the XBM rows."""
    names = [f"baseline/{loss}" for loss in LOSSES] + [f"pml/{loss}" for loss in PML_RECIPES]
    return set(names)


def mixed_runtimes(rows, left, right, seeds):
    """Whether rows `left` and `right` trained on different runtimes on any of `seeds`."""
    by_seed = {
        name: {r["seed"]: runtime_of(r) for r in rows.get(name, [])} for name in (left, right)
    }
    return any(by_seed[left][seed] != by_seed[right][seed] for seed in seeds)


def loss_rows(rows, diverged=None):
    """One dict per loss family: keras-dml and PML means, XBM on and off, the seeds, whether
    the benchmark has a PML row for it, the seeds each side diverged on (`diverged`,
    `{row: [seed, ...]}`), and whether the XBM comparison mixes runtimes."""
    diverged = diverged or {}
    table = []
    for loss in loss_families():
        keras_dml, pml, seeds = paired(rows, f"baseline/{loss}", f"pml/{loss}")
        xbm_row, plain_row = f"baseline/{loss}{XBM_SUFFIX}", f"baseline/{loss}"
        with_xbm, without_xbm, xbm_seeds = paired(rows, xbm_row, plain_row)
        table.append(
            {
                "loss": loss,
                "keras_dml": keras_dml,
                "pml": pml if loss in PML_RECIPES else None,
                "has_pml_row": loss in PML_RECIPES,
                "seeds": seeds,
                "keras_dml_seeds": sorted({r["seed"] for r in rows.get(f"baseline/{loss}", [])}),
                "xbm": with_xbm,
                "no_xbm": without_xbm if with_xbm else None,
                "xbm_seeds": xbm_seeds,
                "xbm_mixed_runtimes": mixed_runtimes(rows, xbm_row, plain_row, xbm_seeds),
                "diverged": {
                    side: diverged.get(name, [])
                    for side, name in (("keras_dml", plain_row), ("pml", f"pml/{loss}"))
                    + (("xbm", xbm_row),)
                },
            }
        )
    return table


def runtime_table(rows):
    """`[(runtime, {seed: number of records})]` of the records of the table's rows in `rows`
    (`table_rows`), most records first."""
    counts = {}
    shown = table_rows()
    for row, records in rows.items():
        for record in records if row in shown else []:
            per_seed = counts.setdefault(runtime_of(record), {})
            per_seed[record["seed"]] = per_seed.get(record["seed"], 0) + 1
    return sorted(counts.items(), key=lambda item: -sum(item[1].values()))


def latest_per_seed(paths):
    """`{row: [record, ...]}` of the records in `paths` (read in order), keeping the last record
    of each row and seed: a row measured again (e.g. with `--rerank`) replaces its older record
    instead of counting its seed twice. A seed whose last record diverged is left out (see
    `diverged_seeds`)."""
    return latest_runs(paths)[0]


def diverged_seeds(paths):
    """`{row: [seed, ...]}`: the seeds whose last record in `paths` is a diverged run."""
    return latest_runs(paths)[1]


def latest_runs(paths):
    """`(latest_per_seed(paths), diverged_seeds(paths))` from one reading of each file. Within
    one file a diverged record of a row and seed counts after its trained one."""
    latest = {}
    for path in paths:
        for runs in read_runs(path):
            for row, records in runs.items():
                for record in records:
                    latest[(row, record["seed"])] = record
    rows, diverged = {}, {}
    for (row, seed), record in latest.items():
        if "diverged" in record:
            diverged.setdefault(row, []).append(seed)
        else:
            rows.setdefault(row, []).append(record)
    return rows, {row: sorted(seeds) for row, seeds in diverged.items()}


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


def _cell(means, metric, diverged=(), has_row=True):
    if not has_row:
        return "n/a"
    if means is None:
        return "diverged" if diverged else "-"
    return f"{means[metric]:.3f}"


def _difference(left, right, metric):
    if left is None or right is None:
        return "-"
    return f"{left[metric] - right[metric]:+.3f}"


def format_table(rows, markdown=False, diverged=None):
    """The table as text lines (GitHub markdown when `markdown`); `diverged` is
    `diverged_seeds` of the same files."""
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
    for entry in loss_rows(rows, diverged):
        keras_dml, pml = entry["keras_dml"], entry["pml"]
        xbm, no_xbm = entry["xbm"], entry["no_xbm"]
        seeds = entry["seeds"] or entry["keras_dml_seeds"]
        gone = entry["diverged"]
        mark = "*" if entry["xbm_mixed_runtimes"] else ""
        other = "†" if entry["loss"] in PML_DIFFERENT_DEFINITIONS else ""
        pml_difference = {
            metric: _difference(keras_dml, pml, metric) + other if entry["seeds"] else "-"
            for metric in METRICS
        }
        xbm_difference = {
            metric: _difference(xbm, no_xbm, metric) + mark if entry["xbm_seeds"] else "-"
            for metric in METRICS
        }
        body.append(
            [
                entry["loss"],
                _cell(keras_dml, "recall@1", gone["keras_dml"]),
                _cell(pml, "recall@1", gone["pml"], entry["has_pml_row"]),
                pml_difference["recall@1"],
                _cell(keras_dml, "map@r", gone["keras_dml"]),
                _cell(pml, "map@r", gone["pml"], entry["has_pml_row"]),
                pml_difference["map@r"],
                ",".join(map(str, seeds)) or "-",
                _cell(xbm, "recall@1", gone["xbm"]),
                xbm_difference["recall@1"],
                _cell(xbm, "map@r", gone["xbm"]),
                xbm_difference["map@r"],
                ",".join(map(str, entry["xbm_seeds"])) or "-",
            ]
        )
    lines = render_lines(header, body, markdown)
    lines += [
        "",
        "† PML's loss of that name is defined otherwise (benchmarks.accuracy.torch_reference).",
    ]
    seeds = sorted({seed for counts in dict(runtime_table(rows)).values() for seed in counts})
    lines += ["", "Where the records trained (records per seed):", ""]
    lines += render_lines(
        ["runtime", *[f"seed {seed}" for seed in seeds]],
        [
            [runtime, *[str(counts.get(seed, 0)) for seed in seeds]]
            for runtime, counts in runtime_table(rows)
        ],
        markdown,
    )
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
        lines += render_lines(["re-ranking", "R@1", "diff", "MAP@R", "diff"], body, markdown)
    return lines


def render_lines(header, body, markdown):
    """`header` and `body` (lists of cell strings) as GitHub markdown lines or aligned text."""
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
        help="results.jsonl files of benchmarks/accuracy/run.py (a later record of a row and seed "
        "replaces an earlier one)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    rows, diverged = latest_runs(args.results)
    print("\n".join(format_table(rows, markdown=args.markdown, diverged=diverged)))


if __name__ == "__main__":
    main()
