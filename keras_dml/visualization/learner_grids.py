"""`plot_learner_retrieval_grids`: every learner's retrieval grid of an ensemble, side by side."""

import numpy as np

from keras_dml.pairs.distances import l2_normalize
from keras_dml.visualization._common import (
    check_labels,
    display_images,
    embeddings_of,
    learner_slices,
    new_figure,
)
from keras_dml.visualization.fonts import use_fallback_fonts
from keras_dml.visualization.neighbors import nearest_neighbors
from keras_dml.visualization.retrieval_grid import draw_grid, resolve_queries


def plot_learner_retrieval_grids(
    model_or_embeddings,
    images,
    labels,
    queries=8,
    k=5,
    learner_dims=None,
    class_names=None,
    seed=0,
    batch_size=64,
    cell_size=0.8,
    ax=None,
):
    """One retrieval grid per learner: the same queries, neighbours by learner k's slice only.

    Args:
        model_or_embeddings: a keras_dml model (embeds `images`) or an array `[N, D]` (then
            `learner_dims` is required).
        images: float array `[N, H, W, C]`, raw pixels in [0, 255].
        labels: int array `[N]`.
        queries: int (a count spread over classes) or an int array of positions. Defaults to `8`.
        k: int. Neighbours per query. Defaults to `5`.
        learner_dims: sequence of int. Learner sizes. Defaults to `None` (the model's).
        class_names: sequence of str. Names of the labels. Defaults to `None`.
        seed: int. Query selection seed. Defaults to `0`.
        batch_size: int. Images per forward pass of a model. Defaults to `64`.
        cell_size: float. Inches per image in a new figure. Defaults to `0.8`.
        ax: a sequence of one matplotlib Axes per learner. Defaults to `None`.

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: embeddings without `learner_dims`, sizes that do not sum to D, or
            mismatched inputs.
        MissingDependencyError: matplotlib is not installed (`keras-dml[vis]`).

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4.1; Sanakoyeu et al.,
        "Divide and Conquer the Embedding Space for Metric Learning", CVPR 2019, Sec. 3.2.
    """
    shown = display_images(images)
    labels = check_labels(labels, len(shown))
    embeddings = embeddings_of(model_or_embeddings, images, batch_size)
    slices = learner_slices(model_or_embeddings, learner_dims)
    if slices[-1][1] != embeddings.shape[1]:
        raise ValueError(
            f"The learner sizes {[b - a for a, b in slices]} must sum to the embedding size "
            f"{embeddings.shape[1]}. Received: learner_dims={learner_dims}"
        )
    query_ids = resolve_queries(labels, queries, seed)
    figure, axes = new_figure(
        len(slices),
        ax,
        (cell_size * (k + 1.4), cell_size * 1.3 * len(query_ids)),
        "plot_learner_retrieval_grids",
    )
    for learner, ((start, stop), axis) in enumerate(zip(slices, axes)):
        part = l2_normalize(embeddings[:, start:stop])
        neighbor_ids, _ = nearest_neighbors(part[query_ids], part, k, query_ids)
        hits = int(np.sum(labels[neighbor_ids[:, 0]] == labels[query_ids]))
        draw_grid(
            axis,
            shown,
            labels,
            query_ids,
            neighbor_ids,
            class_names,
            f"learner {learner + 1}: first correct {hits}/{len(query_ids)}",
        )
    return use_fallback_fonts(figure)
