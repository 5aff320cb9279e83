"""The table of `benchmarks/accuracy/run.py`: recorded runs, their means, each row's signed
difference from the baseline trained with the same loss, and (for runs recorded with
`--rerank`) each row's metrics after re-ranking.

Usage:
    python -m benchmarks.accuracy.run --table --output DIR   # DIR/results.jsonl
"""

import json
import os

import numpy as np

from benchmarks.accuracy.rows import BUILT_IN_LOSSES

METRICS = ("recall@1", "map@r", "r_precision", "nmi")


def table_key(record):
    """The table row of a record: its row name, with `@<regime>` outside the scratch regime."""
    regime = record.get("regime", "scratch")
    return record["row"] if regime == "scratch" else f"{record['row']}@{regime}"


# Where a record without a `runtime` entry trained: every row recorded before rows ran elsewhere
# trained on this project's CPU machine, keras-dml's rows with TensorFlow and PML's with PyTorch.
CPU_RUNTIME = {"backend": "tensorflow", "device": "cpu"}
PML_CPU_RUNTIME = {"backend": "pytorch", "device": "cpu"}


def record_runtime(record):
    """`{"backend", "device"}` a record trained on: its `runtime`, or for a record kept before
    runtimes were, this project's CPU machine with its row's framework."""
    default = PML_CPU_RUNTIME if record["row"].startswith("pml/") else CPU_RUNTIME
    return record.get("runtime", default)


def train_time(records):
    """The mean train time of a row's records, with where they trained when it was not this
    project's CPU machine (`CPU_RUNTIME`, `PML_CPU_RUNTIME`); `"mixed runtimes"` when its seeds
    trained in different places (their times do not average)."""
    runtimes = {json.dumps(record_runtime(r), sort_keys=True) for r in records}
    if len(runtimes) > 1:
        return "mixed runtimes"
    seconds = f"{np.mean([r['seconds'] for r in records]):.0f} s"
    runtime = json.loads(runtimes.pop())
    if runtime in (CPU_RUNTIME, PML_CPU_RUNTIME):
        return seconds
    return f"{seconds} ({runtime['backend']}, {runtime['device']})"


def read_records(path):
    """`{table key: [record, ...]}` in file order, from a `results.jsonl`: the runs that
    trained. A run that diverged is recorded without metrics and read by `diverged_runs`.

    Raises:
        SystemExit: no file at `path` (a one-line message naming the fix).
    """
    return read_runs(path)[0]


def diverged_runs(path):
    """`{table key: [record, ...]}` of the runs in `path` that diverged: their test embeddings
    were NaN or Inf, and `run.py` recorded them with a `diverged` message, no metrics."""
    return read_runs(path)[1]


def read_runs(path):
    """`(trained, diverged)`, each `{table key: [record, ...]}` in file order, in one reading
    of `path` (see `read_records`, which raises the same `SystemExit`)."""
    if not os.path.exists(path):
        raise SystemExit(
            f"error: no results at {path}; run some rows first (--rows ROW --output DIR) or "
            "copy benchmarks/results/accuracy_hangul.jsonl there as results.jsonl"
        )
    trained, diverged = {}, {}
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            runs = diverged if "diverged" in record else trained
            runs.setdefault(table_key(record), []).append(record)
    return trained, diverged


def loss_of(record):
    """The loss a record trained with, comparable across rows: the run config's `loss` entry
    without what the run fits to the data (`num_classes`). A PML row's recipe is the one its
    `baseline/<recipe>` row trains, by the benchmark's construction (`torch_reference.py`
    translates each recipe's settings), so it stands for that row's loss; a PyTorch method row
    (`rows.TORCH_METHOD_ROWS`, settings with a `method`) is compared with PML's own row of its
    recipe, `pml/<recipe>` (same framework). A method row without a loss entry trained the loss
    built into its model (`BUILT_IN_LOSSES`, e.g. ABE's Eq. 10)."""
    settings = record["settings"]
    if "recipe" in settings:
        side = "pml" if "method" in settings else "baseline"
        return {"baseline": f"{side}/{settings['recipe']}"}
    loss = settings.get("loss") or BUILT_IN_LOSSES.get(record["row"].split("/")[0]) or {}
    return {k: v for k, v in loss.items() if k != "num_classes"}


def pairing(record):
    """What a row's record and its baseline's must share: the seed and, in the pretrained
    regime, the backbone weights they fine-tuned (their sha256, recorded since the backbone was
    trained a second time; records from before have none and pair with each other)."""
    return record["seed"], record.get("pretrained", {}).get("sha256")


def seed_differences(records, base, shared, metric):
    """`metric` of `records` minus `base`'s, one value per shared pairing (seed order)."""
    mine = {pairing(r): r["metrics"][metric] for r in records}
    theirs = {pairing(b): b["metrics"][metric] for b in base}
    order = sorted(shared, key=lambda pair: (pair[0], str(pair[1])))
    return [float(mine[pair] - theirs[pair]) for pair in order]


def paired_differences(records, base, metric):
    """`metric` of one row's `records` minus another's (`base`), on each seed both have (and,
    pretrained, the same backbone weights: `pairing`), in seed order; empty when none is shared."""
    shared = {pairing(r) for r in records} & {pairing(b) for b in base}
    return seed_differences(records, base, shared, metric)


def signed_spread(entry, metric):
    """`+0.012` for one shared seed, `+0.012 (+0.004 to +0.020)` (the mean, then the smallest
    and largest per-seed difference) for several."""
    values = entry["by_seed"][metric]
    mean = f"{entry[metric]:+.3f}"
    if len(values) < 2:
        return mean
    return f"{mean} ({min(values):+.3f} to {max(values):+.3f})"


def differences_from_baseline(rows):
    """Each row's difference from the baseline trained with the same loss.

    A row is compared with the `baseline/<loss>` row of its regime whose recorded loss entry and
    backbone are the same (`loss_of`; a PyTorch method row with `pml/<recipe>`), on the seeds
    both have (and, pretrained, the same backbone weights: `pairing`), so the difference is the
    method's (or PML's) and not the loss's, the backbone's or a seed's; of those, one with the
    row's optimizer settings first. Positive: the row is ahead of the baseline. Records written
    before records named their settings are left out: their loss is not on record.

    Args:
        rows: dict. `read_records`' output.

    Returns:
        A list of dicts (`row`, `baseline`, `seeds`, the `recall@1` / `map@r` differences of the
        means, and `by_seed`: `{metric: [difference on each shared seed]}`, their spread), in
        table order; `baseline` is `None` (and no differences) where no baseline row
        with the same loss and a shared seed is recorded.
    """
    known = {key: [r for r in records if "settings" in r] for key, records in rows.items()}
    found = []
    for key, records in known.items():
        row, _, regime = key.partition("@")
        if row == "defaults" or row.startswith("baseline/"):
            continue
        entry = {"row": key, "baseline": None, "seeds": []}
        found.append(entry)
        losses = [loss_of(r) for r in records]
        if not losses or any(loss != losses[0] for loss in losses):
            continue  # no loss on record, or seeds trained with different losses
        backbone = records[0]["settings"].get("backbone")
        # A baseline fine-tuned with the row's own optimizer settings (e.g. the same
        # learning-rate multipliers) comes first; else the one with the library's defaults.
        optimizer = records[0]["settings"].get("optimizer")
        candidates = sorted(
            known.items(),
            key=lambda item: any(b["settings"].get("optimizer") != optimizer for b in item[1]),
        )
        for other, base in candidates:
            other_row, _, other_regime = other.partition("@")
            pml_pair = losses[0] == {"baseline": other_row}  # incl. pml/<recipe> (loss_of)
            if not (other_row.startswith("baseline/") or pml_pair) or other_regime != regime:
                continue
            if not base or not (pml_pair or all(loss_of(b) == losses[0] for b in base)):
                continue
            if any(b["settings"].get("backbone") != backbone for b in base):
                continue  # a keras-hub row's baseline is the one on its backbone
            shared = {pairing(r) for r in records} & {pairing(b) for b in base}
            if not shared:
                continue
            entry.update(baseline=other, seeds=sorted(seed for seed, _ in shared), by_seed={})
            for metric in ("recall@1", "map@r"):
                entry["by_seed"][metric] = seed_differences(records, base, shared, metric)
                entry[metric] = float(np.mean(entry["by_seed"][metric]))
            break
    return found


def print_table(path):
    """Prints the mean over seeds of every row recorded in `path` (results.jsonl), then each
    row's difference from the baseline with the same loss (`differences_from_baseline`)."""
    rows = read_records(path)
    print(f"{'row':<40} {'R@1':>6} {'MAP@R':>6} {'R-Prec':>6} {'NMI':>6} seeds  time")
    for row, records in rows.items():
        means = [np.mean([r["metrics"][k] for r in records]) for k in METRICS]
        seeds = ",".join(str(r["seed"]) for r in records)
        print(
            f"{row:<40} "
            + " ".join(f"{m:>6.3f}" for m in means)
            + f" {seeds:<5} "
            + (train_time(records))
        )
    for row, records in diverged_runs(path).items():
        seeds = ",".join(str(r["seed"]) for r in records)
        print(f"{row:<40} diverged on seed {seeds}: {records[-1]['diverged']}")
    print("\ndifference from the baseline with the same loss (row - baseline, shared seeds)")
    print(f"{'row':<40} {'baseline':<40} {'dR@1':>7} {'dMAP@R':>7} seeds")
    for entry in differences_from_baseline(rows):
        if entry["baseline"] is None:
            print(f"{entry['row']:<40} (no baseline row with this loss and a shared seed)")
            continue
        print(
            f"{entry['row']:<40} {entry['baseline']:<40} {signed_spread(entry, 'recall@1'):>7} "
            f"{signed_spread(entry, 'map@r'):>7} {','.join(map(str, entry['seeds']))}"
        )
    reranked = rerank_rows(rows)
    if reranked:
        print("\nre-ranked test metrics (mean over the seeds recorded with it; d: minus plain)")
        print(f"{'row':<40} {'rerank':<14} {'R@1':>6} {'MAP@R':>6} {'dR@1':>7} {'dMAP@R':>7} seeds")
        for entry in reranked:
            print(
                f"{entry['row']:<40} {entry['rerank']:<14} {entry['recall@1']:>6.3f} "
                f"{entry['map@r']:>6.3f} {entry['d_recall@1']:>+7.3f} {entry['d_map@r']:>+7.3f} "
                f"{','.join(map(str, entry['seeds']))}"
            )


def rerank_rows(rows):
    """The re-ranked metrics of every row recorded with `--rerank`, against its plain metrics.

    Args:
        rows: dict. `read_records`' output.

    Returns:
        A list of dicts (`row`, `rerank`, `seeds`, `recall@1`, `map@r` and their differences
        `d_recall@1`, `d_map@r` from the same records' plain metrics), in table order.
    """
    found = []
    for key, records in rows.items():
        methods = []
        for record in records:
            methods += [m for m in record.get("metrics_rerank", {}) if m not in methods]
        for method in methods:
            runs = [r for r in records if method in r.get("metrics_rerank", {})]
            entry = {"row": key, "rerank": method, "seeds": [r["seed"] for r in runs]}
            for metric in ("recall@1", "map@r"):
                value = np.mean([r["metrics_rerank"][method][metric] for r in runs])
                plain = np.mean([r["metrics"][metric] for r in runs])
                entry[metric], entry[f"d_{metric}"] = float(value), float(value - plain)
            found.append(entry)
    return found
