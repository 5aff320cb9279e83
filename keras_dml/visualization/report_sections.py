"""The pictures of a run report that need more than one plotting call."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.visualization import compositor_weights, projection, retrieval_grid
from keras_dml.visualization._common import embeddings_of, new_figure
from keras_dml.visualization.report_html import image_html
from keras_dml.visualization.report_run import sample_images, training_clusters


def retrieval_figure(embeddings, images, labels, queries, k, class_names):
    """The retrieval grid, queries split into two side-by-side halves above 8 queries."""
    halves = [queries] if len(queries) <= 8 else np.array_split(queries, 2)
    rows = max(len(h) for h in halves)
    figure, axes = new_figure(len(halves), None, (k + 1.4, 1.3 * rows), "the run report")
    for half, axis in zip(halves, axes):
        retrieval_grid.plot_retrieval_grid(
            embeddings, images, labels, queries=half, k=k, class_names=class_names, ax=axis
        )
    return figure


def projection_figure(embeddings, labels, projections, class_names, seed):
    """The projections side by side (PCA, then t-SNE or UMAP)."""
    figure, axes = new_figure(len(projections), None, (5.0, 4.5), "the run report")
    for method, axis in zip(projections, axes):
        projection.plot_projection(
            embeddings, None, labels, method=method, class_names=class_names, seed=seed, ax=axis
        )
    return figure


def training_sample(state, config, seed, count=500):
    """A seeded sample of the training split, drawn once and kept in `state`."""
    if "train_sample" not in state:
        state["train_sample"] = sample_images(
            state["splits"]["train"], count, config["image_size"], seed
        )
    return state["train_sample"]


def compositor_section(model, config, state, seed):
    """DCML's compositor weights averaged over a training sample."""
    images, labels, _ = training_sample(state, config, seed)
    return (
        image_html(compositor_weights.plot_compositor_weights(model, images), "compositor weights")
        + f"<p class='note'>Averaged over {len(labels)} training images.</p>"
    )


def clusters_section(run_dir, model, config, state, seed):
    """Training images by class and by their cluster (D&C, hierarchical D&C); '' without one."""
    train = state["splits"]["train"]
    clusters = training_clusters(run_dir, model, config, len(train))
    if clusters is None:
        return ""
    images, labels, positions = training_sample(state, config, seed)
    embeddings = l2_normalize(embeddings_of(model, images))
    figure = projection.plot_projection(
        embeddings,
        None,
        labels,
        clusters=clusters[positions],
        class_names=train.class_names,
        seed=seed,
    )
    return (
        image_html(figure, "training clusters")
        + f"<p class='note'>{len(labels)} training images, by class and by the cluster "
        "(learner) of the last division.</p>"
    )
