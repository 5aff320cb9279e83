"""`write_report`: one self-contained HTML page per run (config, metrics, pictures)."""

import html
import json
import os
import warnings

import numpy as np

from keras_dml.data.run_splits import load_splits
from keras_dml.utils import optional_import
from keras_dml.visualization._common import embeddings_of
from keras_dml.visualization.attention import plot_attention
from keras_dml.visualization.learner_diagnostics import plot_learner_diagnostics
from keras_dml.visualization.learner_grids import plot_learner_retrieval_grids
from keras_dml.visualization.report_html import (
    REPORT_NAME,
    Sections,
    image_html,
    metrics_html,
    page_html,
)
from keras_dml.visualization.report_run import load_run_model, read_run, sample_images
from keras_dml.visualization.report_sections import (
    clusters_section,
    compositor_section,
    projection_figure,
    retrieval_figure,
)
from keras_dml.visualization.retrieval_grid import select_queries
from keras_dml.visualization.training_curves import plot_training_curves


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
    """`(html_text, failed_section_titles)`: the report page of a run folder; see `write_report`."""
    run = read_run(run_dir)
    config, metrics, history = run["config"], run["metrics"], run["history"]
    sections = Sections()
    state = {}

    def load():
        model_name = "the trained model"
        if model is None:
            state["model"], model_name = load_run_model(run_dir)
        else:
            state["model"] = model
        if splits is None:
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
    sections.add("Metrics", lambda: metrics_html(metrics, history, eval_every))
    if history:
        sections.add(
            "Training curves",
            lambda: image_html(
                plot_training_curves(history, eval_every=eval_every), "training curves"
            ),
        )

    ready = "embeddings" in state
    if ready:
        images, labels = state["images"], state["labels"]
        embeddings, names = state["embeddings"], state["class_names"]
        the_model = state["model"]
        queries = select_queries(labels, num_queries, seed)
        sections.add(
            "Retrieval",
            lambda: (
                image_html(
                    retrieval_figure(embeddings, images, labels, queries, k, names),
                    "retrieval grid",
                )
                + "<p class='note'>Each row: a query, then its nearest neighbours; green frames "
                "share the query's class, red ones do not.</p>"
            ),
        )
        sections.add(
            "Projection",
            lambda: image_html(
                projection_figure(embeddings, labels, projections, names, seed), "projections"
            ),
        )
        num_learners = len(getattr(the_model, "learner_dims", ()) or ())
        if num_learners > 1:
            dims = list(the_model.learner_dims)
            sections.add(
                "Learners: what each one retrieves",
                lambda: image_html(
                    plot_learner_retrieval_grids(
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
                lambda: image_html(
                    plot_learner_diagnostics(embeddings, None, labels, learner_dims=dims),
                    "per-learner diagnostics",
                ),
            )
        if hasattr(the_model, "attention_maps"):
            sections.add(
                "Attention maps",
                lambda: image_html(
                    plot_attention(
                        the_model, images[queries[:6]], labels[queries[:6]], class_names=names
                    ),
                    "attention maps",
                ),
            )
        if hasattr(the_model, "compositor_weights"):
            sections.add(
                "Compositor weights",
                lambda: compositor_section(the_model, config, state, seed),
            )
        sections.add(
            "Training clusters",
            lambda: clusters_section(run_dir, the_model, config, state, seed),
        )

    sections.add(
        "Configuration",
        lambda: "<pre>" + html.escape(json.dumps(config, indent=2, sort_keys=True)) + "</pre>",
    )
    return page_html(run_dir, config, sections, output_path), sections.failures


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

    Args:
        run_dir: str. A run folder written by `keras_dml.training.train`.
        output: str. Where to write the page. Defaults to `None` (`run_dir/report.html`).
        model: the trained model, to skip reloading `model.keras`. Defaults to `None`.
        splits: dict of loaded splits (from `load_splits`), to skip reloading. Defaults to `None`.
        num_queries: int. Queries in the retrieval grid. Defaults to `16`.
        max_points: int. Size of the test and training samples. Defaults to `500`.
        k: int. Neighbours per query. Defaults to `5`.
        projections: sequence of `"pca"`, `"tsne"`, `"umap"`, `"auto"`. Defaults to
            `("pca", "auto")`.
        seed: int. Seed of the samples and of the projections. Defaults to `0`.

    Returns:
        str, the path of the written page.

    Raises:
        ValueError: `run_dir` holds no `config.json`.
        MissingDependencyError: matplotlib is not installed (`keras-dml[vis]`).
    """
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
    """`write_report` at the end of training: returns the page, or `None` with a warning.

    Args:
        run_dir: str. The run folder.
        model: the trained model. Defaults to `None` (reload `model.keras`).
        splits: dict of loaded splits. Defaults to `None` (reload from the config).
        verbose: bool. Print where the page is and the TensorBoard command. Defaults to `True`.
        **options: passed to `write_report`.
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
