"""`write_report`: one self-contained HTML page per run (config, metrics, pictures).

The page inlines every picture as a base64 PNG, so it can be mailed or archived alone. It reads
the run folder that `keras_dml.training.train` writes (`config.json`, `metrics.json`,
`history.json`, `model.keras`, `logs/`) and reloads a bounded sample of the test data from the
configuration (`keras_dml.training.load_splits`).
"""

import base64
import datetime
import html
import json
import os
import warnings

import numpy as np

from keras_dml.visualization._common import embeddings_of, figure_png, l2_normalize
from keras_dml.visualization.report_run import (
    load_run_model,
    read_run,
    sample_images,
    training_clusters,
)

REPORT_NAME = "report.html"
_STYLE = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
code, pre { background: #f4f4f4; padding: 0.1em 0.3em; }
pre { padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.25em 0.7em; }
td.num { text-align: right; font-family: monospace; }
img { max-width: 100%; display: block; margin: 0.5em 0; }
p.note { color: #555; } p.error { color: #b00; font-weight: bold; }
"""


def _image(figure, alt):
    encoded = base64.b64encode(figure_png(figure)).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{encoded}">'


def _table(rows, header):
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        tds = []
        for value in row:
            if isinstance(value, float):
                tds.append(f'<td class="num">{value:.4f}</td>')
            else:
                tds.append(f"<td>{html.escape(str(value))}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><tr>{cells}</tr>{''.join(body)}</table>"


def _metrics_html(metrics, history, eval_every=1):
    parts = []
    if metrics:
        rows = [(key, value) for key, value in metrics.items() if key != "split"]
        parts.append(f"<p>Test metrics ({html.escape(str(metrics.get('split', 'test')))}):</p>")
        parts.append(_table(rows, ("metric", "value")))
    else:
        parts.append('<p class="note">No metrics.json in this run.</p>')
    validation = [k for k in (history or {}) if k.startswith("val_") and history[k]]
    if validation:
        rows = []
        for key in sorted(validation):
            values = np.asarray(history[key], dtype=np.float64)
            best = int(np.nanargmax(values)) if np.any(np.isfinite(values)) else 0
            rows.append((key, float(values[-1]), float(values[best]), eval_every * (best + 1)))
        parts.append("<p>Validation (held-out training classes):</p>")
        parts.append(_table(rows, ("metric", "last", "best", "best at epoch")))
    return "\n".join(parts)


class _Sections:
    """Collects `(title, html)` sections; a failing picture becomes a warning and a note."""

    def __init__(self):
        self.items = []
        self.failures = []

    def add(self, title, build):
        try:
            body = build()
        except Exception as error:  # a picture must never lose the page (or the run)
            message = f"{type(error).__name__}: {error}"
            warnings.warn(f"Report section {title!r} could not be drawn: {message}", stacklevel=3)
            self.failures.append(title)
            body = f'<p class="error">Could not draw this section: {html.escape(message)}</p>'
        if body:
            self.items.append((title, body))


def _evaluation_split(splits):
    return splits["test"] if "test" in splits else splits["query"]


def build_report_html(
    run_dir,
    model=None,
    splits=None,
    num_queries=16,
    max_points=500,
    k=5,
    projections=("pca", "auto"),
    seed=0,
    output_path=None,
):
    """The report page of a run folder as an HTML string; see `write_report`.

    Returns:
        `(html_text, failed_section_titles)`.
    """
    from keras_dml import visualization as vis

    run = read_run(run_dir)
    config, metrics, history = run["config"], run["metrics"], run["history"]
    sections = _Sections()
    state = {}

    def load():
        model_name = "the trained model"
        if model is None:
            state["model"], model_name = load_run_model(run_dir)
        else:
            state["model"] = model
        if splits is None:
            from keras_dml.training import load_splits

            state["splits"] = load_splits(config)
        else:
            state["splits"] = splits
        data = _evaluation_split(state["splits"])
        images, labels, _ = sample_images(data, max_points, config["image_size"], seed)
        state.update(
            images=images,
            labels=labels,
            class_names=data.class_names,
            embeddings=embeddings_of(state["model"], images),
        )
        return (
            f"<p class='note'>Pictures below use {model_name} on a seeded sample of "
            f"{len(labels)} of the {len(data)} images of the {html.escape(data.split)} split "
            f"({len(np.unique(labels))} classes): neighbours are searched within this sample.</p>"
        )

    sections.add("Data", load)
    eval_every = int(config.get("eval_every", 1))
    sections.add("Metrics", lambda: _metrics_html(metrics, history, eval_every))
    if history:
        sections.add(
            "Training curves",
            lambda: _image(
                vis.plot_training_curves(history, eval_every=eval_every), "training curves"
            ),
        )

    ready = "embeddings" in state
    if ready:
        images, labels = state["images"], state["labels"]
        embeddings, names = state["embeddings"], state["class_names"]
        the_model = state["model"]
        queries = vis.select_queries(labels, num_queries, seed)
        sections.add(
            "Retrieval",
            lambda: (
                _image(
                    _retrieval_figure(embeddings, images, labels, queries, k, names),
                    "retrieval grid",
                )
                + "<p class='note'>Each row: a query, then its nearest neighbours; green frames "
                "share the query's class, red ones do not.</p>"
            ),
        )
        sections.add(
            "Projection",
            lambda: _image(
                _projection_figure(embeddings, labels, projections, names, seed), "projections"
            ),
        )
        num_learners = len(getattr(the_model, "learner_dims", ()) or ())
        if num_learners > 1:
            dims = list(the_model.learner_dims)
            sections.add(
                "Learners: what each one retrieves",
                lambda: _image(
                    vis.plot_learner_retrieval_grids(
                        embeddings,
                        images,
                        labels,
                        queries=queries[:8],
                        k=k,
                        learner_dims=dims,
                        class_names=names,
                    ),
                    "per-learner retrieval grids",
                ),
            )
            sections.add(
                "Learners: strength and correlation",
                lambda: _image(
                    vis.plot_learner_diagnostics(embeddings, None, labels, learner_dims=dims),
                    "per-learner diagnostics",
                ),
            )
        if hasattr(the_model, "attention_maps"):
            sections.add(
                "Attention maps",
                lambda: _image(
                    vis.plot_attention(
                        the_model, images[queries[:6]], labels[queries[:6]], class_names=names
                    ),
                    "attention maps",
                ),
            )
        if hasattr(the_model, "compositor_weights"):
            sections.add(
                "Compositor weights",
                lambda: _compositor_section(the_model, config, state, seed),
            )
        sections.add(
            "Training clusters",
            lambda: _clusters_section(run_dir, the_model, config, state, seed),
        )

    sections.add(
        "Configuration",
        lambda: "<pre>" + html.escape(json.dumps(config, indent=2, sort_keys=True)) + "</pre>",
    )
    return _page(run_dir, config, sections, output_path), sections.failures


def _retrieval_figure(embeddings, images, labels, queries, k, class_names):
    """The retrieval grid, queries split into two side-by-side halves above 8 queries."""
    from keras_dml.visualization._common import new_figure
    from keras_dml.visualization.retrieval_grid import plot_retrieval_grid

    halves = [queries] if len(queries) <= 8 else np.array_split(queries, 2)
    rows = max(len(h) for h in halves)
    figure, axes = new_figure(len(halves), None, (k + 1.4, 1.3 * rows), "the run report")
    for half, axis in zip(halves, axes):
        plot_retrieval_grid(
            embeddings, images, labels, queries=half, k=k, class_names=class_names, ax=axis
        )
    return figure


def _projection_figure(embeddings, labels, projections, class_names, seed):
    """The projections side by side (PCA, then t-SNE or UMAP)."""
    from keras_dml.visualization._common import new_figure
    from keras_dml.visualization.projection import plot_projection

    figure, axes = new_figure(len(projections), None, (5.0, 4.5), "the run report")
    for method, axis in zip(projections, axes):
        plot_projection(
            embeddings, None, labels, method=method, class_names=class_names, seed=seed, ax=axis
        )
    return figure


def _training_sample(state, config, seed, count=500):
    """A seeded sample of the training split, drawn once and kept in `state`."""
    if "train_sample" not in state:
        state["train_sample"] = sample_images(
            state["splits"]["train"], count, config["image_size"], seed
        )
    return state["train_sample"]


def _compositor_section(model, config, state, seed):
    """DCML's compositor weights averaged over a training sample."""
    from keras_dml import visualization as vis

    images, labels, _ = _training_sample(state, config, seed)
    return (
        _image(vis.plot_compositor_weights(model, images), "compositor weights")
        + f"<p class='note'>Averaged over {len(labels)} training images.</p>"
    )


def _clusters_section(run_dir, model, config, state, seed):
    """Training images by class and by their cluster (D&C, hierarchical D&C); '' without one."""
    from keras_dml import visualization as vis

    train = state["splits"]["train"]
    clusters = training_clusters(run_dir, model, config, len(train))
    if clusters is None:
        return ""
    images, labels, positions = _training_sample(state, config, seed)
    embeddings = l2_normalize(embeddings_of(model, images))
    figure = vis.plot_projection(
        embeddings,
        None,
        labels,
        clusters=clusters[positions],
        class_names=train.class_names,
        seed=seed,
    )
    return (
        _image(figure, "training clusters")
        + f"<p class='note'>{len(labels)} training images, by class and by the cluster "
        "(learner) of the last division.</p>"
    )


def _page(run_dir, config, sections, output_path):
    run_dir = os.path.abspath(run_dir)
    where = os.path.abspath(output_path) if output_path else os.path.join(run_dir, REPORT_NAME)
    logs = os.path.join(run_dir, "logs")
    title = f"keras-dml run: {config.get('method', '?')} on {config.get('dataset', '?')}"
    written = datetime.datetime.now().isoformat(timespec="seconds")
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Run folder: <code>{html.escape(run_dir)}</code>; this page: "
        f"<code>{html.escape(where)}</code> (written {written}, open it in any browser).</p>",
        f"<p>Training curves per step in TensorBoard: <code>tensorboard --logdir "
        f"{html.escape(logs)}</code>, then open the address it prints.</p>",
    ]
    for title_text, content in sections.items:
        body.append(f"<h2>{html.escape(title_text)}</h2>\n{content}")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def write_report(
    run_dir,
    output=None,
    model=None,
    splits=None,
    num_queries=16,
    max_points=500,
    k=5,
    projections=("pca", "auto"),
    seed=0,
):
    """Writes the run's HTML report: config, metrics, curves, retrieval grid, projections.

    Sections: the data sample used; test metrics and the best validation values; training
    curves (`history.json`); a retrieval grid (`num_queries` queries, top-`k`); PCA and t-SNE
    (UMAP when installed) projections of `max_points` test embeddings; then the method's own
    pictures: per-learner retrieval grids and Recall@1 / correlation for ensembles, attention
    maps for ABE, compositor weights for DCML, training clusters for D&C and hierarchical D&C;
    and the configuration. A section that cannot be drawn warns and says so on the page.

    Args:
        run_dir: str. A run folder written by `keras_dml.training.train`.
        output: str. Where to write the page. Defaults to `None` (`run_dir/report.html`).
        model: the trained model, to skip reloading `model.keras`. Defaults to `None`.
        splits: dict of loaded splits (as `load_splits` returns), to skip reloading the data.
            Defaults to `None`.
        num_queries: int. Queries in the retrieval grid. Defaults to `16`.
        max_points: int. Size of the test sample (and of the training sample). Defaults to
            `500`.
        k: int. Neighbours per query. Defaults to `5`.
        projections: sequence of `"pca"`, `"tsne"`, `"umap"`, `"auto"`. Defaults to
            `("pca", "auto")`.
        seed: int. Seed of the samples and of the projections. Defaults to `0`.

    Returns:
        str, the path of the written page.

    Raises:
        ValueError: when `run_dir` holds no `config.json`.
        MissingDependencyError: when matplotlib is not installed (`pip install keras-dml[vis]`).

    Examples:
    >>> path = write_report("runs/baseline")  # doctest: +SKIP
    >>> # open runs/baseline/report.html in a browser
    """
    from keras_dml.utils import optional_import

    optional_import("matplotlib", feature="the run report")
    path = output or os.path.join(run_dir, REPORT_NAME)
    text, _ = build_report_html(
        run_dir, model, splits, num_queries, max_points, k, projections, seed, output_path=path
    )
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def report_after_training(run_dir, model=None, splits=None, verbose=True, **options):
    """`write_report` for the end of a training run: a failure warns instead of raising.

    The run's files are already saved when this runs; a missing matplotlib or a picture that
    cannot be drawn must not turn a finished run into an error.

    Args:
        run_dir: str. The run folder.
        model: the trained model. Defaults to `None` (reload `model.keras`).
        splits: dict of loaded splits. Defaults to `None` (reload from the config).
        verbose: bool. Print where the page is and how to open TensorBoard. Defaults to `True`.
        **options: passed to `write_report`.

    Returns:
        str path of the page, or `None` when it could not be written (with a warning).

    Examples:
    >>> report_after_training("runs/baseline", model, splits)  # doctest: +SKIP
    """
    try:
        path = write_report(run_dir, model=model, splits=splits, **options)
    except Exception as error:  # the trained run is saved; the report is a bonus
        warnings.warn(
            f"The run is saved in {run_dir}, but its report could not be written "
            f"({type(error).__name__}: {error}). Retry with: keras-dml report {run_dir}",
            stacklevel=2,
        )
        return None
    if verbose:
        print(describe_report(path, run_dir), flush=True)
    return path


def describe_report(path, run_dir):
    """Two lines telling the user where the report is and how to open TensorBoard."""
    return (
        f"Report: {os.path.abspath(path)} (open it in a browser)\n"
        f"TensorBoard: tensorboard --logdir {os.path.join(os.path.abspath(run_dir), 'logs')}"
    )
