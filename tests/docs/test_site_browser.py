"""The documentation site builds strictly and every page works in a real browser.

`mkdocs build --strict` builds the site into a temporary folder; headless Chromium then opens every
page (`tests/support/docs_site.py`) and the test fails on an internal link to no page, an anchor its
page lacks, or an image that does not load (slow suite: one build and one crawl). A copy of a built
page with a broken link, a broken anchor and a missing image shows the check catches each, and a
small site with a broken anchor shows the strict build refuses it (default suite)."""

import importlib
import inspect
import os
import shutil
import textwrap

import pytest

from tests.support import docs_site

pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
pytest.importorskip(
    "mkdocstrings", reason="mkdocstrings is not installed (pip install -e '.[docs]')"
)
if docs_site.chromium_path() is None:
    pytest.skip("Chromium is not installed (apt-get install chromium)", allow_module_level=True)

# Links relative to the site's root: the broken page gets `<base href="../">`.
BROKEN = (
    '<a href="no_such_page/">x</a><a href="benchmarks/#no-such-anchor">y</a>'
    '<img src="images/no_such_image.png" alt="z">'
)


@pytest.mark.slow
def test_every_page_opens_with_working_links_anchors_and_images_and_breakage_is_caught(tmp_path):
    """One build and one crawl (about 30 s on the shared CI machine): every page of the site,
    plus `broken/index.html`, a copy of the getting-started page with a link to no page, a
    link to a missing anchor and a missing image, which must be the only problems found."""
    site = tmp_path / "site"
    build = docs_site.build_site(site)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (site / "broken").mkdir()
    page = (site / "index.html").read_text(encoding="utf-8")
    page = page.replace("<head>", '<head><base href="../">', 1)
    (site / "broken" / "index.html").write_text(page.replace("</article>", BROKEN + "</article>"))
    pages = docs_site.crawl(site)

    found = docs_site.problems(site, pages)
    assert [line for line in found if not line.startswith("broken/")] == []
    broken = sorted(line.split(" ", 2)[2] for line in found if line.startswith("broken/"))
    assert len(broken) == 3, broken
    assert broken[0].endswith("site/benchmarks/#no-such-anchor names an anchor its page lacks")
    assert broken[1].endswith("site/images/no_such_image.png did not load")
    assert broken[2].endswith("site/no_such_page/ points at no page")
    assert len(pages) == len(docs_site.built_pages(site)) >= 31
    # The crawl saw the pictures loaded and the API reference's anchors.
    images = {os.path.basename(src): width for page in pages for src, width in page["images"]}
    assert images["retrieval_grid.png"] > 0 and images["projection.png"] > 0
    api = next(p for p in pages if p["page"].endswith("api/models/index.html"))
    assert "keras_dml.models.DivideAndConquer" in api["ids"]
    assert undocumented_inherited_methods(pages) == []


def documented_object(anchor):
    """The object an API anchor (`keras_dml.search.EmbeddingIndex`) names, or `None`."""
    parts = anchor.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name, None)
        return found
    return None


def undocumented_inherited_methods(pages):
    """`Class.method` anchors missing from the API pages: the public, docstringed methods a
    documented class inherits from a keras-dml class that no API page documents (a mixin such
    as `IndexSearch`), so a reader finds them nowhere. mkdocstrings leaves inherited members
    out unless the page's `inherited_members` option names them."""
    anchors = {anchor for page in pages if "/api/" in page["page"] for anchor in page["ids"]}
    documented_classes = set()
    for anchor in anchors:
        cls = documented_object(anchor) if anchor.startswith("keras_dml.") else None
        if inspect.isclass(cls):
            documented_classes.add(cls)
    missing = []
    for page in pages:
        if "/api/" not in page["page"]:
            continue
        for anchor in page["ids"]:
            cls = documented_object(anchor) if anchor.startswith("keras_dml.") else None
            if not inspect.isclass(cls) or not cls.__module__.startswith("keras_dml"):
                continue
            for base in cls.__mro__[1:]:
                # A namedtuple's fields are its docstring's `Fields:`, not methods.
                generated = hasattr(base, "_fields") and base.__doc__.startswith(base.__name__)
                if not base.__module__.startswith("keras_dml") or base in documented_classes:
                    continue
                if generated:
                    continue
                for name, member in vars(base).items():
                    public = inspect.getdoc(member) and not name.startswith("_")
                    shown = name in vars(cls) or f"{anchor}.{name}" in page["ids"]
                    if public and not shown:
                        missing.append(f"{anchor}.{name}")
    return sorted(set(missing))


def test_strict_build_refuses_a_link_to_a_missing_anchor(tmp_path):
    """The project's `mkdocs.yml` settings (validation, strict) on a two-page site."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[next](next.md#there)\n")
    (tmp_path / "docs" / "next.md").write_text("# Next\n\n## There\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        textwrap.dedent(f"""\
            INHERIT: {os.path.join(docs_site.ROOT, "mkdocs.yml")}
            docs_dir: docs
            hooks: []
            plugins: [search]
            nav: [index.md, next.md]
            """)
    )
    assert docs_site.build_site(tmp_path / "out", str(config), cwd=tmp_path).returncode == 0
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n[next](next.md#elsewhere)\n")
    build = docs_site.build_site(tmp_path / "out", str(config), cwd=tmp_path)
    assert build.returncode != 0
    assert "does not contain an anchor '#elsewhere'" in build.stdout + build.stderr
    shutil.rmtree(tmp_path / "out", ignore_errors=True)
