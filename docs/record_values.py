"""Numbers in the site's prose, filled from the records when the site is built (`docs/hooks.py`).

A page never types a measured number: it writes a value marker where the number goes,

    <!-- value: KIND ARGUMENT ... -->

and the build replaces it with the value read from `benchmarks/results/`. The kinds:

- `accuracy ROW METRIC [SEED]`: the row's METRIC (`recall@1`, `map@r`, `r_precision`, `nmi`)
  in `accuracy_hangul.jsonl`, the mean over its recorded seeds or the one SEED (`0.983`), the
  same mean the accuracy table shows;
- `difference ROW METRIC`: ROW minus the baseline trained with the same loss, on the seeds both
  have, as in the differences table (`+0.013`);
- `compare ROW OTHER METRIC`: the comparison word the records decide: `ahead of` when ROW's
  METRIC beats OTHER's on every seed both have (pretrained: from the same backbone weights),
  `behind` when it trails on every one, else `level with`;
- `gaps ROW OTHER METRIC`: ROW minus OTHER seed by seed, on the seeds both have (pretrained:
  from the same backbone weights), in seed order (`-0.013, -0.026, -0.015`);
- any of the four above ending in `in NAME` reads `benchmarks/results/NAME.jsonl` instead (e.g.
  `difference abe/best@pretrained map@r in accuracy_hangul_pretrained`), and `in NAME+NAME2`
  reads both, a record of NAME2 replacing NAME's of the same row and seed, as the reality-check
  table reads them (`compare baseline/ntxent+xbm baseline/ntxent map@r in
  accuracy_hangul+reality_check_hangul`);
- `reranking SAMPLES METHOD FIELD`: a field of `reranking_<SAMPLES>.json`'s row of the re-ranking
  METHOD (`none`, `aqe`, `alpha_qe`, `dba`, `k_reciprocal`), e.g. `cpu_seconds` (`13`); the field
  `extra_peak_rss_mb` is the row's peak RSS minus the plain run's, signed (`+126`);
- `speed NAME FIELD`: a measured value of `speed_<NAME>.json`, FIELD a dotted path into its
  `measured` entry (`speed hub_backbone_step ratio`: `1.05`; a field under
  `milliseconds_per_step` in whole milliseconds: `412`).

A marker that names no record, row, seed, metric or field stops the build with one line naming
the page, the marker and the fix.

Example:
    >>> render_values("R@1 <!-- value: accuracy baseline/proxy_nca recall@1 -->", "x.md")
    'R@1 0.991'
"""

import json
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
sys.path.insert(0, ROOT)  # the benchmarks package of this checkout
from benchmarks.accuracy.reality_check_table import latest_per_seed  # noqa: E402
from benchmarks.accuracy.table import (  # noqa: E402
    differences_from_baseline,
    paired_differences,
    read_records,
)

ACCURACY = os.path.join(RESULTS, "accuracy_hangul.jsonl")
VALUE = re.compile(r"<!-- value: ([^>]*?) -->")


class MarkerError(ValueError):
    """A value marker that names nothing on record; the message says what to fix."""


def seed_values(rows, row, metric):
    """`{seed: METRIC}` of `row`'s records."""
    if row not in rows:
        raise MarkerError(
            f"no row {row!r} in the records; name a recorded row "
            "(`python -m benchmarks.accuracy.run --table --output DIR` lists them)"
        )
    records = rows[row]
    if metric not in records[0]["metrics"]:
        raise MarkerError(f"no metric {metric!r}; use one of {sorted(records[0]['metrics'])}")
    return {r["seed"]: r["metrics"][metric] for r in records}


def accuracy_value(rows, row, metric, seed=None):
    """The mean of `metric` over `row`'s records, or its value on one `seed`."""
    values = seed_values(rows, row, metric)
    if seed is None:
        return f"{np.mean([r['metrics'][metric] for r in rows[row]]):.3f}"
    if int(seed) not in values:
        raise MarkerError(f"row {row!r} has no seed {seed}; use one of {sorted(values)}")
    return f"{values[int(seed)]:.3f}"


def difference_value(rows, row, metric):
    """`row` minus its same-loss baseline on their shared seeds, signed."""
    seed_values(rows, row, metric)
    entry = next((e for e in differences_from_baseline(rows) if e["row"] == row), {})
    if entry.get("baseline") is None or metric not in entry:
        raise MarkerError(
            f"row {row!r} is a baseline or has none with its loss and a shared seed (or no "
            f"{metric!r} difference: recall@1 and map@r only); quote it with `accuracy` instead"
        )
    return f"{entry[metric]:+.3f}"


def compare_word(rows, row, other, metric):
    """`ahead of` / `behind` / `level with`: `row` against `other` seed by seed."""
    for name in (row, other):
        seed_values(rows, name, metric)  # a row or metric on no record stops with its fix
    differences = paired_differences(rows[row], rows[other], metric)
    if not differences:
        raise MarkerError(f"rows {row!r} and {other!r} share no seed; compare rows that do")
    if all(d > 0 for d in differences):
        return "ahead of"
    if all(d < 0 for d in differences):
        return "behind"
    return "level with"


def seed_gaps(rows, row, other, metric):
    """`row` minus `other` on each seed both have, signed, in seed order."""
    for name in (row, other):
        seed_values(rows, name, metric)
    differences = paired_differences(rows[row], rows[other], metric)
    if not differences:
        raise MarkerError(f"rows {row!r} and {other!r} share no seed; compare rows that do")
    return ", ".join(f"{d:+.3f}" for d in differences)


def reranking_value(samples, method, field):
    """A field of the re-ranking benchmark's row of `method` (`none` for the plain run)."""
    path = os.path.join(RESULTS, f"reranking_{samples}.json")
    if not os.path.exists(path):
        raise MarkerError(
            f"no record benchmarks/results/reranking_{samples}.json; run "
            f"`python -m benchmarks.speed.reranking --num-samples {samples}`"
        )
    with open(path) as f:
        rows = {row["rerank"].split("(")[0]: row for row in json.load(f)["rows"]}
    if method not in rows:
        raise MarkerError(f"no re-ranking {method!r} on record; use one of {sorted(rows)}")
    if field == "extra_peak_rss_mb":
        return f"{rows[method]['peak_rss_mb'] - rows['none']['peak_rss_mb']:+.0f}"
    if field not in rows[method]:
        raise MarkerError(f"no field {field!r}; use one of {sorted(rows[method])}")
    value = rows[method][field]
    return f"{value:.0f}" if field.endswith(("seconds", "_mb")) else f"{value:.3f}"


def speed_value(name, field):
    """A value of `speed_<name>.json`'s `measured` entry at the dotted path `field`."""
    path = os.path.join(RESULTS, f"speed_{name}.json")
    if not os.path.exists(path):
        raise MarkerError(
            f"no record benchmarks/results/speed_{name}.json; run `python -m benchmarks.speed."
            f"{name}` or name a speed_<NAME>.json there"
        )
    with open(path) as f:
        value = json.load(f)["measured"]
    for key in field.split("."):
        if not isinstance(value, dict) or key not in value:
            found = sorted(value) if isinstance(value, dict) else []
            raise MarkerError(f"no field {field!r} in speed_{name}.json; use one of {found}")
        value = value[key]
    if not isinstance(value, int | float):
        raise MarkerError(f"field {field!r} of speed_{name}.json is not a number; name one")
    return f"{value:.0f}" if field.startswith("milliseconds") else f"{value:.2f}"


KINDS = {
    "accuracy": (accuracy_value, (2, 3)),
    "difference": (difference_value, (2,)),
    "compare": (compare_word, (3,)),
    "gaps": (seed_gaps, (3,)),
    "reranking": (reranking_value, (3,)),
    "speed": (speed_value, (2,)),
}


def render_values(markdown, page_name="page", accuracy=ACCURACY):
    """`markdown` with each value marker replaced by the value its records hold.

    Args:
        markdown: str. A page's Markdown.
        page_name: str. The page, for the error message.
        accuracy: str. The accuracy records (`accuracy_hangul.jsonl`).

    Returns:
        str: the page with its values filled in.

    Raises:
        ValueError: a marker of an unknown kind or with the wrong arguments, or naming no
            record (one line: the page, the marker and the fix).
    """
    records = {accuracy: read_records(accuracy)} if "<!-- value: " in markdown else {}

    def rows_of(name):
        """The records of `benchmarks/results/NAME.jsonl` (or of `A+B`: both files, the later
        record of a row and seed replacing the earlier), read once per page."""
        paths = [os.path.join(RESULTS, f"{part}.jsonl") for part in name.split("+")]
        for path, part in zip(paths, name.split("+")):
            if not os.path.exists(path):
                raise MarkerError(f"no records benchmarks/results/{part}.jsonl; name a file there")
        if name not in records:
            records[name] = read_records(paths[0]) if len(paths) == 1 else latest_per_seed(paths)
        return records[name]

    def replace(match):
        kind, *arguments = match.group(1).split()
        try:
            rows = records.get(accuracy, {})
            unread = ("reranking", "speed")  # read their own records
            if kind not in unread and len(arguments) > 2 and arguments[-2] == "in":
                rows, arguments = rows_of(arguments[-1]), arguments[:-2]
            if kind not in KINDS:
                raise MarkerError(f"unknown kind {kind!r}; use one of {sorted(KINDS)}")
            function, counts = KINDS[kind]
            if len(arguments) not in counts:
                raise MarkerError(
                    f"{kind} takes {' or '.join(map(str, counts))} arguments "
                    "(see docs/record_values.py)"
                )
            return function(*arguments) if kind in unread else function(rows, *arguments)
        except MarkerError as error:
            raise ValueError(f"{page_name}: value marker {match.group(0)!r}: {error}") from None

    return VALUE.sub(replace, markdown)
