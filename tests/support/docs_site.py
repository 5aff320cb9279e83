"""Helpers of the documentation-site tests: the pages MkDocs builds and a headless-Chromium crawl.

`build_site` runs `mkdocs build --strict` into a folder. `crawl` opens every built page in one
headless Chromium (each page loaded in turn into a frame of a probe page) and records, as the
browser sees them, every link, every image's decoded width and every element id. `problems`
turns that into one line per broken internal link, missing image or missing anchor.
"""

import html.parser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import urllib.parse

from tests.support.paths import REPO_ROOT

ROOT = REPO_ROOT

# Loads each page of `PAGES` into the frame in turn and, once it has loaded, records what the
# browser made of it; the result goes into the body's `data-crawl` attribute for `--dump-dom`.
PROBE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<iframe id="frame" style="width:1200px;height:800px"></iframe>
<script>
const PAGES = %s;
const found = [];
const frame = document.getElementById("frame");
let next = 0;
function record() {
  const doc = frame.contentDocument;
  found.push({
    page: PAGES[next - 1],
    links: [...doc.querySelectorAll("a[href]")].map(a => a.href),
    images: [...doc.images].map(i => [i.src, i.complete ? i.naturalWidth : 0]),
    ids: [...doc.querySelectorAll("[id]")].map(e => e.id),
  });
  load();
}
function load() {
  if (next === PAGES.length) {
    document.body.setAttribute("data-crawl", JSON.stringify(found));
    return;
  }
  frame.onload = () => setTimeout(record, 50);
  frame.src = PAGES[next++];
}
load();
</script></body></html>
"""


def load_hooks():
    """The site's MkDocs hooks module (`docs/hooks.py`: the tables built from the records)."""
    spec = importlib.util.spec_from_file_location(
        "docs_hooks", os.path.join(ROOT, "docs", "hooks.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rendered_markdown(page):
    """The Markdown of the site page `page` (e.g. `docs/benchmarks.md`) with its tables built,
    as MkDocs renders it."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return load_hooks().render_tables(f.read(), page)


def chromium_path():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def build_site(destination, config="mkdocs.yml", cwd=ROOT):
    """Runs `mkdocs build --strict` into `destination`; returns the completed process."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", config, "-d", str(destination)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def built_pages(site):
    """Every HTML page of the built site but the 404 page, as paths relative to `site`."""
    pages = []
    for folder, _, files in os.walk(site):
        pages += [
            os.path.relpath(os.path.join(folder, name), site)
            for name in files
            if name.endswith(".html") and name != "404.html"
        ]
    return sorted(pages)


class _Body(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.attrs = {}

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.attrs = dict(attrs)


def crawl(site, timeout=240):
    """What headless Chromium sees on every page of `site`: a list of dicts with `page` (its
    `file://` URL), `links` (absolute URLs), `images` (`[src, decoded width]`, 0 when the
    image did not load) and `ids`."""
    site = os.path.abspath(site)
    urls = [f"file://{os.path.join(site, page)}" for page in built_pages(site)]
    probe = os.path.join(site, "_crawl_probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(PROBE % json.dumps(urls))
    flags = ["--headless", "--disable-gpu", "--no-sandbox", "--allow-file-access-from-files"]
    try:
        dom = subprocess.run(
            [chromium_path(), *flags, "--virtual-time-budget=60000", "--dump-dom"]
            + [f"file://{probe}"],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        os.remove(probe)
    body = _Body()
    body.feed(dom.stdout)
    if "data-crawl" not in body.attrs:
        raise RuntimeError(f"Chromium did not finish the crawl: {dom.stderr[-2000:]}")
    return json.loads(body.attrs["data-crawl"])


def _path(url):
    return urllib.parse.unquote(urllib.parse.urlparse(url).path)


def _target_file(site, path):
    """The file a `file://` path of the site serves (a folder serves its index.html)."""
    if os.path.isdir(path):
        path = os.path.join(path, "index.html")
    return path if os.path.isfile(path) else None


def problems(site, pages):
    """One line per broken internal link, image that did not load, or anchor that no element of
    its target page carries, in the crawl `pages` of `site`."""
    site = os.path.abspath(site)
    ids = {_path(p["page"]): set(p["ids"]) for p in pages}
    found = []
    for page in pages:
        name = os.path.relpath(urllib.parse.urlparse(page["page"]).path, site)
        for src, width in page["images"]:
            if not width:
                found.append(f"{name}: image {src} did not load")
        for link in page["links"]:
            url = urllib.parse.urlparse(link)
            if url.scheme != "file":
                continue  # external links are not followed (the CI machine may be offline)
            path = urllib.parse.unquote(url.path)
            if not os.path.abspath(path).startswith(site):
                found.append(f"{name}: link {link} leaves the site")
                continue
            target = _target_file(site, path)
            if target is None:
                found.append(f"{name}: link {link} points at no page")
            elif url.fragment and target.endswith(".html"):
                anchors = ids.get(target)
                if anchors is None:
                    anchors = _ids_of(target)
                if urllib.parse.unquote(url.fragment) not in anchors:
                    found.append(f"{name}: link {link} names an anchor its page lacks")
    return found


class _Ids(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        self.ids.update(value for key, value in attrs if key == "id" and value)


def _ids_of(path):
    parser = _Ids()
    with open(path, encoding="utf-8") as f:
        parser.feed(f.read())
    return parser.ids
