"""`plot_learner_diagnostics`: each learner's Recall@1 and the correlation between learners."""

import numpy as np

from keras_dml.evaluation.ensemble_diagnostics import ensemble_diagnostics
from keras_dml.visualization._common import (
    check_labels,
    embeddings_of,
    learner_slices,
    new_figure,
)
from keras_dml.visualization.fonts import use_fallback_fonts


def plot_learner_diagnostics(
    model_or_embeddings,
    images,
    labels,
    learner_dims=None,
    batch_size=64,
    max_pairs=200_000,
    ax=None,
):
    """Strength and correlation of an ensemble: per-learner Recall@1 bars and a correlation map.

    Args:
        model_or_embeddings: a keras_dml model (embeds `images`) or an array `[N, D]` (then
            `learner_dims` is required).
        images: float array `[N, H, W, C]` of raw pixels, or `None` with embeddings.
        labels: int array `[N]`.
        learner_dims: sequence of int. Learner sizes. Defaults to `None` (the model's).
        batch_size: int. Images per forward pass of a model. Defaults to `64`.
        max_pairs: int. Image pairs sampled for the correlation. Defaults to `200_000`.
        ax: a sequence of two matplotlib Axes. Defaults to `None` (a new figure).

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: embeddings without `learner_dims`, or mismatched inputs.
        MissingDependencyError: matplotlib is not installed (`keras-dml[vis]`).

    References:
        Opitz et al., "Deep Metric Learning with BIER", TPAMI 2020, Sec. 4.1, Tables 2 and 8;
        Breiman, "Random Forests", 2001.
    """
    embeddings = embeddings_of(model_or_embeddings, images, batch_size)
    labels = check_labels(labels, len(embeddings))
    slices = learner_slices(model_or_embeddings, learner_dims)
    dims = [stop - start for start, stop in slices]
    if sum(dims) != embeddings.shape[1]:
        raise ValueError(
            f"The learner sizes {dims} must sum to the embedding size {embeddings.shape[1]}. "
            f"Received: learner_dims={learner_dims}"
        )
    diagnostics = ensemble_diagnostics(embeddings, labels, dims, max_pairs=max_pairs)
    recalls = [*diagnostics["learner_recall@1"], diagnostics["recall@1"]]
    names = [f"learner {m + 1}" for m in range(len(dims))] + ["ensemble"]

    figure, (bars_axis, corr_axis) = new_figure(2, ax, (4.2, 3.6), "plot_learner_diagnostics")
    colors = ["#4c72b0"] * len(dims) + ["#dd8452"]
    bars_axis.bar(range(len(recalls)), recalls, color=colors)
    for position, value in enumerate(recalls):
        bars_axis.text(position, value, f"{value:.3f}", ha="center", va="bottom", fontsize=8)
    bars_axis.set_xticks(range(len(recalls)), names, rotation=30, ha="right")
    bars_axis.set_ylim(0.0, 1.08)
    bars_axis.set_ylabel("Recall@1")
    bars_axis.set_title(f"Recall@1 on {len(labels)} images")

    matrix = np.asarray(diagnostics["classifier_correlation_matrix"], dtype=np.float64)
    image = corr_axis.imshow(matrix, cmap="coolwarm", vmin=-1.0, vmax=1.0)
    figure.colorbar(image, ax=corr_axis, label="Pearson r of pair similarities")
    ticks = [f"{m + 1}" for m in range(len(dims))]
    corr_axis.set_xticks(range(len(dims)), ticks)
    corr_axis.set_yticks(range(len(dims)), ticks)
    corr_axis.set_xlabel("learner")
    corr_axis.set_ylabel("learner")
    for i in range(len(dims)):
        for j in range(len(dims)):
            corr_axis.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=8)
    mean = diagnostics["classifier_correlation"]
    corr_axis.set_title(
        "correlation between learners" + ("" if np.isnan(mean) else f" (mean {mean:.2f})")
    )
    return use_fallback_fonts(figure)
