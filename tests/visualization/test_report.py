"""The run report: page structure without a browser (default suite), a real browser (slow)."""

import base64
import html.parser
import io
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from keras_dml import backbones
from keras_dml.demo import demo_config
from keras_dml.methods import get_method
from keras_dml.training import load_splits
from keras_dml.visualization import report as report_module
from keras_dml.visualization.report import report_after_training, write_report
from keras_dml.visualization.report_run import training_clusters
from keras_dml_cli import main

pytest.importorskip("matplotlib")
Image = pytest.importorskip("PIL.Image")

SMALL = {"num_queries": 4, "max_points": 60, "projections": ("pca",)}


class _Page(html.parser.HTMLParser):
    """Headings, image sources, external references and error notes of a report page."""

    def __init__(self):
        super().__init__()
        self.headings, self.images, self.external, self.errors = [], [], [], 0
        self._in_h2 = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._in_h2 = tag == "h2"
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        for key in ("src", "href"):
            if key in attrs and not attrs[key].startswith("data:"):
                self.external.append(attrs[key])
        if "error" in (attrs.get("class") or "").split():
            self.errors += 1

    def handle_endtag(self, tag):
        self._in_h2 = self._in_h2 and tag != "h2"

    def handle_data(self, data):
        if self._in_h2:
            self.headings.append(data.strip())


def parse(path):
    page = _Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page


def decoded_sizes(sources):
    sizes = []
    for src in sources:
        assert src.startswith("data:image/png;base64,"), src[:40]
        image = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
        sizes.append(image.size)
    return sizes


@pytest.fixture(scope="module")
def splits():
    return load_splits(demo_config("baseline"))


def make_run(folder, method, splits, model_options=None):
    """A run folder as `train` leaves it: config, an (untrained) model, history, metrics."""
    config = demo_config(method, epochs=2)
    if model_options:
        config["model"] = model_options
    backbone = backbones.get("convnet", input_shape=(32, 32, 3))
    model = get_method(method).build(config, backbone, splits)
    os.makedirs(folder / "logs", exist_ok=True)
    model.save(folder / "model.keras")
    (folder / "config.json").write_text(json.dumps(config))
    history = {"loss": [0.5, 0.4], "val_recall@1": [0.8, 0.9], "val_map@r": [0.3, 0.35]}
    (folder / "history.json").write_text(json.dumps(history))
    metrics = {"split": "test", "recall@1": 0.91, "map@r": 0.42}
    (folder / "metrics.json").write_text(json.dumps(metrics))
    if method == "dc":
        state = folder / "state"
        state.mkdir()
        num_train = len(splits["train"])
        for division, offset in ((1, 0), (2, 1)):
            assignment = (np.arange(num_train) + offset) % 2
            np.savez(state / f"division_{division}.npz", assignment=assignment, division=division)
    return model


COMMON = ["Data", "Metrics", "Training curves", "Retrieval", "Projection", "Configuration"]
LEARNERS = ["Learners: what each one retrieves", "Learners: strength and correlation"]


@pytest.mark.parametrize(
    "method, options, own_sections",
    [
        ("baseline", {"embedding_dim": 16}, []),
        ("dc", {"embedding_dim": 16, "num_learners": 2}, [*LEARNERS, "Training clusters"]),
        ("hdc", {"embedding_dim": 16, "max_learners": 2}, ["Training clusters"]),
        ("bier", {"embedding_dim": 16, "num_learners": 2}, LEARNERS),
        ("abe", {"embedding_dim": 16, "num_learners": 2}, [*LEARNERS, "Attention maps"]),
        (
            "dcml",
            {"num_learners": 2, "learner_dim": 8, "num_compositors": 2},
            [*LEARNERS, "Compositor weights"],
        ),
    ],
)
def test_report_page_holds_every_section_inline(tmp_path, splits, method, options, own_sections):
    make_run(tmp_path, method, splits, options)
    path = write_report(str(tmp_path), **SMALL)
    assert path == os.path.join(str(tmp_path), "report.html")
    page = parse(path)
    assert sorted(page.headings) == sorted(COMMON + own_sections)
    assert page.errors == 0 and page.external == []
    # Every picture is an inline PNG that decodes; one per section with a picture.
    sizes = decoded_sizes(page.images)
    assert len(sizes) == 3 + len(own_sections) and all(w > 100 and h > 100 for w, h in sizes)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    assert f"tensorboard --logdir {os.path.join(str(tmp_path), 'logs')}" in text
    assert "0.9100" in text  # the metrics table


def test_latest_division_gives_the_training_clusters(tmp_path, splits):
    model = make_run(tmp_path, "dc", splits, {"embedding_dim": 16, "num_learners": 2})
    clusters = training_clusters(str(tmp_path), model, {}, len(splits["train"]))
    np.testing.assert_array_equal(clusters, (np.arange(len(splits["train"])) + 1) % 2)
    assert training_clusters(str(tmp_path), model, {}, len(splits["train"]) + 1) is None


def test_a_failing_picture_warns_and_the_page_is_still_written(tmp_path, splits, monkeypatch):
    make_run(tmp_path, "baseline", splits, {"embedding_dim": 16})

    def broken(*args, **kwargs):
        raise RuntimeError("no canvas")

    monkeypatch.setattr("keras_dml.visualization.projection.plot_projection", broken)
    with pytest.warns(UserWarning, match="Projection.*no canvas"):
        path = write_report(str(tmp_path), output=str(tmp_path / "out" / "r.html"), **SMALL)
    page = parse(path)
    assert page.errors == 1 and "Retrieval" in page.headings and len(page.images) == 2


def test_report_after_training_never_raises(tmp_path, monkeypatch, capsys):
    def broken(*args, **kwargs):
        raise ImportError("matplotlib is missing")

    monkeypatch.setattr(report_module, "write_report", broken)
    with pytest.warns(UserWarning, match="saved in .*keras-dml report"):
        assert report_after_training(str(tmp_path)) is None
    assert capsys.readouterr().out == ""


def test_cli_report_and_its_errors(tmp_path, splits, capsys):
    make_run(tmp_path, "baseline", splits, {"embedding_dim": 16})
    argv = ["report", str(tmp_path), "--queries", "4", "--points", "60", "-k", "3"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"Report: {tmp_path / 'report.html'}" in out
    assert f"tensorboard --logdir {tmp_path / 'logs'}" in out
    assert (tmp_path / "report.html").is_file()
    assert main(["report", str(tmp_path / "missing")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("keras-dml: error:") and "config.json" in err and "\n" not in err


@pytest.mark.parametrize("flags, expected", [([], True), (["--no-report"], False)])
def test_cli_train_writes_the_report_unless_told_not_to(tmp_path, monkeypatch, flags, expected):
    calls = []

    def fake_train(config, output_dir, verbose=1, report=True):
        calls.append(report)
        return {"metrics": {"recall@1": 1.0}}

    monkeypatch.setattr("keras_dml.training.train", fake_train)
    argv = ["train", "--method", "baseline", "--dataset", "digits", "--output", str(tmp_path)]
    assert main(argv + flags) == 0
    assert calls == [expected]


def browser_check(page_path, screenshot_path, timeout=120):
    """Loads the page in headless Chromium: console messages, image widths, a screenshot.

    A copy of the page gets a small script that records every error event and every image's
    `naturalWidth` into the DOM, which `--dump-dom` prints after the load.
    """
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does it)")
    with open(page_path, encoding="utf-8") as f:
        text = f.read()
    probe = (
        "<script>window.__errors = [];"
        "window.addEventListener('error', e => window.__errors.push(String(e.message || "
        "(e.target && e.target.src) || 'error').slice(0, 80)), true);"
        "window.addEventListener('load', () => {"
        "document.body.setAttribute('data-widths', JSON.stringify("
        "[...document.images].map(i => i.naturalWidth)));"
        "document.body.setAttribute('data-errors', JSON.stringify(window.__errors));});"
        "</script>"
    )
    checked = os.path.join(os.path.dirname(screenshot_path), "checked.html")
    with open(checked, "w", encoding="utf-8") as f:
        f.write(text.replace("<head>", "<head>" + probe, 1))
    flags = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars"]
    dom = subprocess.run(
        [*flags, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000"]
        + ["--dump-dom", f"file://{checked}"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    subprocess.run(
        [*flags, "--window-size=1200,2400", f"--screenshot={screenshot_path}"]
        + [f"file://{os.path.abspath(page_path)}"],
        capture_output=True,
        timeout=timeout,
        check=True,
    )
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    body = _Body()
    body.feed(dom.stdout)
    return body.attrs, console


class _Body(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.attrs = {}

    def handle_starttag(self, tag, attrs):
        if tag == "body":
            self.attrs = dict(attrs)


@pytest.mark.slow
def test_trained_run_report_renders_in_chromium(tmp_path):
    """`train` writes the report; Chromium loads it without errors and shows every image."""
    from keras_dml.training import train

    budget = bool(os.environ.get("KERAS_DML_CI_BUDGET"))
    run_dir = tmp_path / "dc"
    result = train(demo_config("dc", epochs=1 if budget else 4), str(run_dir), verbose=0)
    assert result["report"] == str(run_dir / "report.html")
    page = parse(result["report"])
    assert "Training clusters" in page.headings and page.errors == 0
    attrs, console = browser_check(result["report"], str(tmp_path / "report.png"))
    assert console == []
    assert json.loads(attrs["data-errors"]) == []
    widths = json.loads(attrs["data-widths"])
    assert len(widths) == len(page.images) >= 6 and min(widths) > 0
    with Image.open(tmp_path / "report.png") as shot:
        assert shot.size == (1200, 2400)
        # Not a blank page: the screenshot holds many distinct colours (text, plots, frames).
        assert len(shot.convert("RGB").getcolors(maxcolors=1 << 20)) > 50
