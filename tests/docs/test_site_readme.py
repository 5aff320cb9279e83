"""The README is short and points into the site; the site's tables come from the records.

The README keeps what a first reader needs (what it is, the set-up commands, a Python and a
command-line example, the headline results) and links into the documentation site for the rest:
it stays under 200 lines, each of its links into `docs/` names a page of the site's nav (and an
anchor that page has), and the numbers of its results table are the records' means. The site's
tables are built by `docs/hooks.py` from `benchmarks/results/`.
"""

import importlib
import importlib.util
import os
import re

import numpy as np
import pytest

from tests.docs.test_commands import ROOT, SITE_PAGES

README_LIMIT = 200


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load_module("docs/hooks.py", "docs_hooks")
accuracy_table = importlib.import_module("benchmarks.accuracy.table")
record_values = load_module("docs/record_values.py", "record_values_for_readme")
griffe_examples = load_module("docs/griffe_examples.py", "docs_griffe_examples")


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def heading_anchors(markdown):
    """The ids MkDocs gives the headings of a page (its `toc` extension's slugs)."""
    from markdown.extensions.toc import slugify

    text = re.sub(r"^```.*?^```", "", markdown, flags=re.M | re.S)  # no headings in code
    return {slugify(title.strip(), "-") for title in re.findall(r"^#+ (.+)$", text, re.M)}


def broken_site_links(readme, pages):
    """One line per link of `readme` (Markdown text) into `docs/` that names no page of
    `pages` (paths `docs/...md`), or an anchor its page lacks, and per relative link elsewhere
    (the README's sections moved into the site; an in-page `#anchor` is a leftover)."""
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", readme):
        if re.match(r"^[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        if not path.startswith("docs/") or path not in pages:
            broken.append(f"{target}: not a page of the site (mkdocs.yml nav)")
        elif anchor and anchor not in heading_anchors(read(path)):
            broken.append(f"{target}: {path} has no heading with that anchor")
    return broken


def test_readme_is_under_200_lines():
    lines = read("README.md").splitlines()
    assert len(lines) < README_LIMIT, f"README.md has {len(lines)} lines; move text into docs/"


def test_readme_links_into_the_site_name_existing_pages_and_anchors():
    readme = read("README.md")
    assert len(re.findall(r"\]\(docs/", readme)) >= 15
    assert broken_site_links(readme, SITE_PAGES) == []


def test_a_link_to_a_missing_page_or_anchor_or_a_leftover_section_is_caught():
    pages = ("docs/index.md", "docs/cli.md")
    good = "[a](docs/index.md#quick-start-a-keras-script) [b](docs/cli.md) [c](https://x.org/a)"
    assert broken_site_links(good, pages) == []
    bad = "[a](docs/nowhere.md) [b](docs/index.md#no-such-heading) [c](#search)"
    assert [line.split(":")[0] for line in broken_site_links(bad, pages)] == [
        "docs/nowhere.md",
        "docs/index.md#no-such-heading",
        "#search",
    ]


def results_section(part=0):
    """The README's Results section: its from-scratch part (0) or the papers' regime (1)."""
    section = read("README.md").split("## Results", 1)[1].split("\n## ", 1)[0]
    return section.split("### The papers' regime", 1)[part]


def readme_results():
    """`{row: (R@1, MAP@R)}` as the README's results table prints them."""
    rows = re.findall(r"^\| `([^`]+)`[^|]*\| ([\d.]+) \| ([\d.]+) \|$", results_section(), re.M)
    return {row: (recall, map_at_r) for row, recall, map_at_r in rows}


def table_cells(markdown):
    """The body rows of `markdown`'s tables whose first cell names a row or a claim."""
    lines = [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line]
    cells = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    return [row for row in cells if row[0] not in ("row", "the paper's claim")]


# The README's verdict on a paper's claim that its row is ahead, from the site's comparison word.
VERDICTS = {
    "ahead of": "holds",
    "behind": "does not hold: behind",
    "level with": "does not hold: level",
}
PRETRAINED = os.path.join(ROOT, "benchmarks", "results", "accuracy_hangul_pretrained.jsonl")


def test_readme_results_are_the_records_means():
    printed = readme_results()
    assert len(printed) >= 4
    records = hooks.read_records(hooks.ACCURACY)
    for row, (recall, map_at_r) in printed.items():
        assert row in records, f"README results row {row!r} has no record"
        means = [np.mean([r["metrics"][k] for r in records[row]]) for k in ("recall@1", "map@r")]
        assert (recall, map_at_r) == tuple(f"{m:.3f}" for m in means), row


def test_readme_papers_regime_rows_are_the_records_with_three_seeds_and_their_spread():
    """The papers' regime: 3 seeds per row, each against the baseline fine-tuned from the same
    weights, with its per-seed range."""
    records = hooks.read_records(PRETRAINED)
    differences = {e["row"]: e for e in hooks.differences_from_baseline(records)}
    printed = [cells for cells in table_cells(results_section(1)) if len(cells) == 5]
    assert len(printed) == 7
    for cells in printed:
        row = cells[0].strip("`")
        assert row in records, f"README papers' regime row {row!r} has no record"
        seeds = sorted(r["seed"] for r in records[row])
        assert cells[1] == ", ".join(map(str, seeds)) and len(seeds) >= 3, row
        means = [np.mean([r["metrics"][k] for r in records[row]]) for k in ("recall@1", "map@r")]
        assert cells[2:4] == [f"{m:.3f}" for m in means], row
        entry = differences.get(row, {"baseline": None})
        expected = "" if entry["baseline"] is None else hooks.signed_spread(entry, "map@r")
        assert cells[4] == expected, f"{row}: README {cells[4]!r}, records {expected!r}"


def test_readme_says_which_claims_hold_seed_by_seed():
    """A paper's claim that its method is ahead holds where the records put it ahead on every
    seed (paired on the backbone weights), is `behind` where it trails on every one, else
    `level`."""
    records = hooks.read_records(PRETRAINED)
    claims = [cells for cells in table_cells(results_section(1)) if len(cells) == 3]
    assert len(claims) >= 6
    for claim, evidence, verdict in claims:
        row, other = re.findall(r"`([^`]+)`", evidence)
        values = accuracy_table.paired_differences(records[row], records[other], "map@r")
        assert evidence.split(": ")[-1] == ", ".join(f"{v:+.3f}" for v in values), claim
        expected = VERDICTS[record_values.compare_word(records, row, other, "map@r")]
        assert verdict == expected, f"{claim}: README {verdict!r}, records {expected!r}"


KANJI_PRETRAINED = os.path.join(ROOT, "benchmarks", "results", "accuracy_kanji_pretrained.jsonl")


def test_readme_kanji_sentence_is_the_records():
    """D&C and DCML behind the baseline on every kanji seed (three of them), and the unfrozen
    hierarchical D&C level with it and ahead of D&C on each."""
    text = " ".join(results_section(1).split())
    assert "D&C trails the baseline on each of three seeds too, the unfrozen" in text
    assert "hierarchical D&C is level with it and ahead of D&C on each, and DCML trails it" in text
    records = hooks.read_records(KANJI_PRETRAINED)
    baseline = "baseline/normalized_softmax@pretrained"
    divided = accuracy_table.paired_differences(
        records["dc/best@pretrained"], records[baseline], "map@r"
    )
    assert len(divided) == 3
    assert record_values.compare_word(records, "dc/best@pretrained", baseline, "map@r") == "behind"
    unfrozen = "hdc/best-unfrozen@pretrained"
    level = accuracy_table.paired_differences(records[unfrozen], records[baseline], "map@r")
    assert len(level) == 3 and all(abs(d) < 0.01 for d in level)
    ahead = accuracy_table.paired_differences(
        records[unfrozen], records["dc/best@pretrained"], "map@r"
    )
    assert len(ahead) == 3 and all(d > 0 for d in ahead)
    composed = accuracy_table.paired_differences(
        records["dcml/best@pretrained"], records[baseline], "map@r"
    )
    assert len(composed) == 3 and all(d < 0 for d in composed)


def test_accuracy_tables_have_one_row_per_recorded_row():
    records = hooks.read_records(hooks.ACCURACY)
    table = hooks.accuracy_table().splitlines()
    assert len(table) == 2 + len(records)
    first = next(iter(records))
    recall = np.mean([r["metrics"]["recall@1"] for r in records[first]])
    assert table[2].startswith(f"| `{first}` |") and f"| {recall:.3f} |" in table[2]
    differences = hooks.accuracy_differences().splitlines()
    compared = [e for e in hooks.differences_from_baseline(records) if e["baseline"]]
    assert len(differences) == 2 + len(compared) >= 20


def test_page_markers_become_tables_and_an_unknown_marker_stops_the_build():
    page = "Before\n\n<!-- table: configs bier -->\n\nAfter\n"
    rendered = hooks.render_tables(page, "methods/bier.md")
    assert "| `recipes/configs/bier_cub200.json` | cub200 | googlenet |" in rendered
    assert "<!-- table" not in rendered and rendered.startswith("Before")
    with pytest.raises(ValueError, match=r"methods/x.md: unknown table marker 'acuracy'; use one"):
        hooks.render_tables("<!-- table: acuracy -->", "methods/x.md")
    with pytest.raises(ValueError, match="no recipe recipes/configs/nosuch_"):
        hooks.render_tables("<!-- table: configs nosuch -->")


def test_recipe_and_speed_tables_come_from_their_records():
    recipes = hooks.recipes_table("fashion_mnist").splitlines()
    assert len(recipes) == 2 + 6 and recipes[2].startswith("| baseline | 0.9633 |")
    speed = hooks.speed_table().splitlines()
    assert "`python -m benchmarks.speed.inference`" in speed[-1]
    assert "the row above's" in hooks.speed_table()


def test_every_method_page_shows_its_recipes_or_says_it_has_none():
    for page in (p for p in SITE_PAGES if p.startswith("docs/methods/")):
        method = os.path.basename(page)[:-3]
        text = read(page)
        assert f"<!-- table: configs {method} -->" in text or "No recipe file" in text, page
        assert "::: keras_dml.models." in text, page


def test_examples_sections_are_indented_for_the_google_parser():
    docstring = "Summary.\n\nArgs:\n    x: int.\n\nExamples:\n>>> f(1)\n2\n\nReferences:\n    A."
    assert griffe_examples.indent_examples(docstring) == (
        "Summary.\n\nArgs:\n    x: int.\n\nExamples:\n    >>> f(1)\n    2\n\nReferences:\n    A."
    )
    indented = "Examples:\n    >>> f(1)\n"
    assert griffe_examples.indent_examples(indented) == indented


def test_zoo_table_lists_every_card_with_its_recorded_metrics():
    from keras_dml import zoo

    cards = zoo.list_models()
    table = hooks.zoo_table().splitlines()
    assert len(table) == 2 + len(cards) >= 12
    published = next(card for card in cards if card["status"] == "published")
    row = next(line for line in table if line.startswith(f"| `{published['name']}` |"))
    assert row.endswith(
        f"| {published['metrics']['recall@1']:.3f} | {published['metrics']['map@r']:.3f} |"
    )
    assert "<!-- table: zoo -->" in read("docs/zoo.md")


def test_readme_loss_by_loss_counts_are_the_records_verdicts():
    """The README's count of losses where keras-dml is ahead of, level with or behind PML, and
    of pair losses that memory helps, recomputed seed by seed from the reality-check records."""
    table = hooks.reality_check_table
    paths = [hooks.ACCURACY, hooks.REALITY_CHECK]
    rows, diverged = table.latest_per_seed(paths), table.diverged_seeds(paths)
    text = " ".join(results_section(1).split("### Loss by loss", 1)[1].split())
    compared = [
        loss
        for loss in table.PML_RECIPES
        if loss not in table.PML_DIFFERENT_DEFINITIONS and f"pml/{loss}" in rows
    ]
    words = {
        loss: record_values.compare_word(rows, f"baseline/{loss}", f"pml/{loss}", "map@r")
        for loss in compared
    }
    count = {word: sum(w == word for w in words.values()) for word in VERDICTS}
    behind = ", ".join(
        {"circle": "Circle", "fast_ap": "FastAP"}.get(loss, loss)
        for loss, word in words.items()
        if word == "behind"
    )
    assert (
        f"of the {len(compared)} losses whose definitions agree and whose PML row trained, "
        f"keras-dml is ahead with {count['ahead of']}, level with {count['level with']} and "
        f"behind with {count['behind']} ({behind})"
    ) in text
    assert diverged.get("pml/soft_triple") == [0, 1] and "SoftTriple diverged on both" in text
    memory = [loss for loss in table.loss_families() if f"baseline/{loss}+xbm" in rows]
    ahead = [
        loss
        for loss in memory
        if record_values.compare_word(rows, f"baseline/{loss}+xbm", f"baseline/{loss}", "map@r")
        == "ahead of"
    ]
    assert f"ahead of the same loss without it with {len(ahead)} of {len(memory)} pair" in text
