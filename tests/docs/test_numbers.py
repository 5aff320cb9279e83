"""No measured number is typed into the site's prose: each comes from a value marker that the
build fills from `benchmarks/results/` (`docs/record_values.py`).

The scan looks at every page's prose (code blocks, inline code and markers removed) for what a
measurement looks like: a decimal (`0.983`), a ratio (`1.09x`), a time (`19.1 s`, `68 ms`), a
size (`1.71 GiB`, `130 MB`) or a share (`6.7 %`). The few numbers of that shape that are settings
or versions, not measurements, are listed in `NOT_MEASURED` with their page.
"""

import glob
import json
import os
import re

import pytest

from tests.support.docs_site import load_hooks
from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT
UNIT = r"(?:s|ms|min|minutes|hours|GiB|MiB|KiB|GB|MB|%)(?![\w])"
MEASUREMENT = re.compile(
    r"(?<![\w.@/=+-])"  # not inside a name, a path, an option or a version range
    rf"(?:\d[\d,]*\.\d+(?:x\b|\s?{UNIT})?"  # 0.983, 1.09x, 19.1 s, 1.71 GiB
    rf"|\d[\d,]*(?:x\b|\s?{UNIT}))"  # 2x, 68 s, 130 MB, 8%
)
# (page, text): numbers shaped like measurements that are settings, versions or addresses.
NOT_MEASURED = {
    ("docs/cli.md", "1.0"),  # the bound a metric saturates at
    ("docs/cli.md", "5%"),  # the share of an epoch a recipe's last stage takes
    ("docs/benchmarks.md", "1.2"),  # the target for JAX's time (a bound)
    ("docs/benchmarks.md", "1.5"),  # the bound for the exact evaluation
    ("docs/data.md", "0.8"),  # augmentation range
    ("docs/data.md", "8%"),  # augmentation shift
    ("docs/distributed.md", "3.15"),  # Keras version
    ("docs/distributed.md", "127.0"),  # 127.0.0.1
    ("docs/install.md", "3.10"),  # Python version
    ("docs/install.md", "115 MB"),  # the fonts' install size apt reports
    ("docs/install.md", "566 MB"),  # the kanji fonts' install size apt reports
    ("docs/data.md", "566 MB"),  # the kanji fonts' install size apt reports
    ("docs/losses.md", "100x"),  # a learning-rate multiplier
    ("docs/methods/bier.md", "10x"),  # a learning-rate multiplier
    ("docs/benchmarks.md", "0.1"),  # a learning-rate multiplier
    ("docs/benchmarks.md", "0.01"),  # the bound a conclusion's test checks
}


def prose(markdown):
    """`markdown` without fenced code, inline code, HTML comments (markers) and link targets."""
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)
    markdown = re.sub(r"`[^`\n]*`", "", markdown)
    # A paper's section, equation, table or figure number ("Sec. 4.2") is a reference.
    markdown = re.sub(r"\b(?:Secs?|Eqs?|Tables?|Figs?)\.?\s+\d+(?:\.\d+)*", "", markdown)
    return re.sub(r"\]\([^)]*\)", "]", markdown)


def typed_measurements(page, markdown):
    """The measurement-shaped numbers of `markdown`'s prose that `NOT_MEASURED` does not list."""
    found = [m.group(0) for m in MEASUREMENT.finditer(prose(markdown))]
    return [text for text in found if (page, text) not in NOT_MEASURED]


def site_pages():
    return sorted(
        os.path.relpath(path, ROOT)
        for path in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True)
    )


def test_the_scan_finds_typed_measurements_and_skips_settings_code_and_markers():
    typed = (
        "seed 0: 0.983 / 0.745 against 0.986; 1.09x the bound, 19.1 s, 68 ms, peak RSS 1.71 "
        "GiB, within 130 MB, 6.7 %, 2x faster, 15.1% without the cache"
    )
    assert typed_measurements("docs/x.md", typed) == [
        "0.983",
        "0.745",
        "0.986",
        "1.09x",
        "19.1 s",
        "68 ms",
        "1.71 GiB",
        "130 MB",
        "6.7 %",
        "2x",
        "15.1%",
    ]
    untyped = (
        "3 epochs at 32 px, 4 x 32-d, 1,000 classes, Adam 1e-3, Eq. 10, `0.983` in code,\n"
        "(CVPR 2019, Sec. 4.2), Table 3.1, Fig. 2.5,\n"
        "<!-- value: accuracy baseline/proxy_nca recall@1 -->, [link](page.md#v0.2), x=0.5,\n"
        "```\n19.1 s\n```\n"
    )
    assert typed_measurements("docs/x.md", untyped) == []
    assert typed_measurements("docs/install.md", "Python 3.10, 115 MB") == []
    assert typed_measurements("docs/cli.md", "Python 3.10") == ["3.10"]


@pytest.mark.parametrize("page", site_pages())
def test_no_page_types_a_measurement(page):
    with open(os.path.join(ROOT, page)) as f:
        typed = typed_measurements(page, f.read())
    assert not typed, (
        f"{page} types measured numbers {typed}: fill them from the records with a value marker "
        "(docs/record_values.py) or cut them"
    )


@pytest.mark.parametrize("page", site_pages())
def test_every_value_marker_of_the_site_names_a_record(page):
    hooks = load_hooks()
    with open(os.path.join(ROOT, page)) as f:
        rendered = hooks.render_values(f.read(), page)
    assert "<!-- value:" not in rendered


def write_records(path, rows):
    """A results.jsonl of `rows`: `{(row, seed): (recall@1, map@r)}`, one loss for all."""
    with open(path, "w") as f:
        for (row, seed), (recall, map_at_r) in rows.items():
            record = {
                "row": row,
                "seed": seed,
                "settings": {"loss": {"name": "proxy_nca"}},
                "metrics": {"recall@1": recall, "map@r": map_at_r},
                "seconds": 1.0,
            }
            f.write(json.dumps(record) + "\n")
    return str(path)


def test_value_markers_are_the_records_means_differences_and_comparisons(tmp_path):
    hooks = load_hooks()
    path = write_records(
        tmp_path / "results.jsonl",
        {
            ("baseline/proxy_nca", 0): (0.90, 0.50),
            ("baseline/proxy_nca", 1): (0.80, 0.40),
            ("mheads/proxy_nca", 0): (0.95, 0.45),
            ("mheads/proxy_nca", 1): (0.85, 0.30),
            ("dc/proxy_nca", 0): (0.91, 0.49),
            ("dc/proxy_nca", 1): (0.79, 0.30),
        },
    )

    def render(marker):
        return hooks.render_values(f"<!-- value: {marker} -->", "x.md", accuracy=path)

    assert render("accuracy baseline/proxy_nca recall@1") == "0.850"
    assert render("accuracy baseline/proxy_nca map@r 1") == "0.400"
    assert render("difference mheads/proxy_nca recall@1") == "+0.050"
    assert render("difference mheads/proxy_nca map@r") == "-0.075"
    assert render("compare mheads/proxy_nca baseline/proxy_nca recall@1") == "ahead of"
    assert render("compare mheads/proxy_nca baseline/proxy_nca map@r") == "behind"
    assert render("compare dc/proxy_nca baseline/proxy_nca recall@1") == "level with"
    assert render("gaps dc/proxy_nca mheads/proxy_nca map@r") == "+0.040, +0.000"
    # `in NAME`: another records file of benchmarks/results/.
    kanji = os.path.join(ROOT, "benchmarks", "results", "accuracy_kanji.jsonl")
    with open(kanji) as f:
        seed0 = next(r for r in map(json.loads, f) if r["row"] == "baseline/proxy_nca")
    in_kanji = render("accuracy baseline/proxy_nca map@r 0 in accuracy_kanji")
    assert in_kanji == f"{seed0['metrics']['map@r']:.3f}"
    assert render("compare baseline/proxy_nca baseline/proxy_nca map@r in accuracy_kanji") == (
        "level with"
    )

    # `in A+B`: both files, B's record of a row and seed replacing A's (the reality-check
    # table's reading): proxy_nca's seed 0 was trained again with re-ranking in B.
    def seed_values(name, row):
        with open(os.path.join(ROOT, "benchmarks", "results", f"{name}.jsonl")) as f:
            found = [r for r in map(json.loads, f) if r["row"] == row]
        return {r["seed"]: r["metrics"]["map@r"] for r in found}

    both = "in accuracy_hangul+reality_check_hangul"
    proxy_nca = "baseline/proxy_nca"
    replaced = seed_values("reality_check_hangul", proxy_nca)[0]
    assert seed_values("accuracy_hangul", proxy_nca)[0] != replaced
    assert render(f"accuracy {proxy_nca} map@r 0 {both}") == f"{replaced:.3f}"
    # ... and rows of different files compare: memory rows in B, the same loss without in A.
    memory = seed_values("reality_check_hangul", "baseline/contrastive+xbm")
    plain = seed_values("accuracy_hangul", "baseline/contrastive")
    signs = {memory[seed] > plain[seed] for seed in memory}
    expected = {frozenset({True}): "ahead of", frozenset({False}): "behind"}.get(
        frozenset(signs), "level with"
    )
    assert render(f"compare baseline/contrastive+xbm baseline/contrastive map@r {both}") == (
        expected
    )
    assert render("reranking 40000 none cpu_seconds") == "13"
    assert render("reranking 40000 dba extra_peak_rss_mb") == "+126"


@pytest.mark.parametrize(
    "marker, message",
    [
        ("acuracy baseline/proxy_nca recall@1", "unknown kind 'acuracy'; use one of"),
        ("accuracy baseline/nosuch recall@1", "no row 'baseline/nosuch' in the records"),
        ("accuracy baseline/proxy_nca recall@1 in nosuch", "no records benchmarks/results/nosuch"),
        (
            "accuracy baseline/proxy_nca recall@1 in accuracy_hangul+nosuch",
            "no records benchmarks/results/nosuch.jsonl",
        ),
        ("accuracy baseline/proxy_nca recall@3", "no metric 'recall@3'; use one of"),
        ("accuracy baseline/proxy_nca recall@1 7", "has no seed 7; use one of"),
        ("accuracy baseline/proxy_nca", "accuracy takes 2 or 3 arguments"),
        ("difference baseline/proxy_nca map@r", "is a baseline or has none with its loss"),
        ("gaps baseline/proxy_nca dc/nosuch map@r", "no row 'dc/nosuch' in the records"),
        ("reranking 123 none cpu_seconds", "no record benchmarks/results/reranking_123.json"),
        ("reranking 40000 nosuch cpu_seconds", "no re-ranking 'nosuch' on record"),
    ],
)
def test_a_marker_naming_no_record_stops_the_build_with_one_line(marker, message):
    hooks = load_hooks()
    with pytest.raises(ValueError) as error:
        hooks.render_values(f"Text <!-- value: {marker} --> more.", "benchmarks.md")
    text = str(error.value)
    assert "\n" not in text
    assert text.startswith(f"benchmarks.md: value marker '<!-- value: {marker} -->': ")
    assert message in text
