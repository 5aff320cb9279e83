"""Heatmap of DCML's compositor weights per learner (the paper's Fig. 4)."""

import os

import numpy as np

from keras_dml.utils import optional_import


def plot_compositor_weights(
    weights_or_model, path, images=None, title="Compositor weights", cmap="viridis", dpi=120
):
    """Writes a PNG heatmap of the average absolute weight of each compositor per learner.

    Rows are the M compositors, columns the K learners; each cell shows `mean_x |c_m^k(x)|`, so
    every row sums to 1. A diverse set of compositors puts its bright cells in different
    columns. matplotlib is imported lazily and used without `pyplot` (no global state, no
    display needed).

    Args:
        weights_or_model: an `[M, K]` array of average absolute weights (e.g. from
            `DCML.compositor_weights`), or a `DCML` model (then `images` is required).
        path: str. Where to write the PNG; parent folders are created.
        images: images or a `tf.data.Dataset`, passed to `model.compositor_weights` when a
            model is given. Defaults to `None`.
        title: str. Figure title. Defaults to `"Compositor weights"`.
        cmap: str. Matplotlib colour map. Defaults to `"viridis"`.
        dpi: int. Resolution of the PNG. Defaults to `120`.

    Returns:
        The `[M, K]` float32 array that was plotted.

    Raises:
        ValueError: for a model without `images`, or weights that are not a finite 2-D array.
        keras_dml.utils.MissingDependencyError: when matplotlib is not installed.

    Examples:
    >>> weights = plot_compositor_weights(model, "compositors.png", images=train_images)
    >>> plot_compositor_weights(weights, "compositors_again.png")

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.3,
        Fig. 4 (weight analysis of compositors on CUB-200-2011).
    """
    if hasattr(weights_or_model, "compositor_weights"):
        if images is None:
            raise ValueError(
                "Pass `images` (e.g. the training images) to average the compositor weights "
                "of a model over them."
            )
        weights = weights_or_model.compositor_weights(images)
    else:
        weights = np.asarray(weights_or_model, dtype="float32")
    if weights.ndim != 2 or weights.size == 0 or not np.all(np.isfinite(weights)):
        raise ValueError(
            "Expected a finite, non-empty [num_compositors, num_learners] array. "
            f"Received shape {weights.shape}."
        )
    figure_module = optional_import("matplotlib.figure", feature="plot_compositor_weights")
    agg = optional_import("matplotlib.backends.backend_agg", feature="plot_compositor_weights")

    num_compositors, num_learners = weights.shape
    figure = figure_module.Figure(
        figsize=(1.2 + 0.8 * num_learners, 1.0 + 0.45 * num_compositors), dpi=dpi
    )
    agg.FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 1, 1)
    image = axes.imshow(weights, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    figure.colorbar(image, ax=axes, label="mean |weight|")
    axes.set_xticks(range(num_learners), [f"g{k + 1}" for k in range(num_learners)])
    axes.set_yticks(range(num_compositors), [f"c{m + 1}" for m in range(num_compositors)])
    axes.set_xlabel("learner")
    axes.set_ylabel("compositor")
    axes.set_title(title)
    for m in range(num_compositors):
        for k in range(num_learners):
            value = float(weights[m, k])
            axes.text(
                k,
                m,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black" if value > 0.6 else "white",
            )
    figure.tight_layout()
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    figure.savefig(path, format="png")
    return weights
