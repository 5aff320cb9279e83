"""DCML's compositor weights per learner: the matrix and its heatmap (the paper's Fig. 4)."""

import numpy as np

from keras_dml.visualization._common import new_figure
from keras_dml.visualization.fonts import use_fallback_fonts


def compositor_weight_matrix(weights_or_model, images=None):
    """The `[M, K]` mean absolute weight `mean_x |c_m^k(x)|` of each compositor per learner.

    Args:
        weights_or_model: an `[M, K]` array, or a `DCML` model (then `images` is required).
        images: images or a `tf.data.Dataset` for `model.compositor_weights`. Defaults to `None`.

    Raises:
        ValueError: a model without `images`, or weights that are not a finite 2-D array.

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.3, Fig. 4.
    """
    if hasattr(weights_or_model, "compositor_weights"):
        if images is None:
            raise ValueError(
                "Pass `images` (e.g. the training images) to average the compositor weights "
                "of a model over them."
            )
        weights = np.asarray(weights_or_model.compositor_weights(images), dtype="float32")
    else:
        weights = np.asarray(weights_or_model, dtype="float32")
    if weights.ndim != 2 or weights.size == 0 or not np.all(np.isfinite(weights)):
        raise ValueError(
            "Expected a finite, non-empty [num_compositors, num_learners] array. "
            f"Received shape {weights.shape}."
        )
    return weights


def plot_compositor_weights(
    weights_or_model, images=None, title="Compositor weights", cmap="viridis", ax=None
):
    """Heatmap of the mean absolute weight of each compositor (rows) per learner (columns).

    Args:
        weights_or_model: an `[M, K]` array or a `DCML` model (see `compositor_weight_matrix`).
        images: images or a `tf.data.Dataset`, with a model. Defaults to `None`.
        title: str. Axes title. Defaults to `"Compositor weights"`.
        cmap: str. Matplotlib colour map. Defaults to `"viridis"`.
        ax: a matplotlib Axes. Defaults to `None` (a new figure).

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: a model without `images`, or weights that are not a finite 2-D array.
        MissingDependencyError: matplotlib is not installed.

    References:
        Zheng, Wang, Lu, Zhou, "Deep Compositional Metric Learning", CVPR 2021, Sec. 4.3, Fig. 4.
    """
    weights = compositor_weight_matrix(weights_or_model, images)
    num_compositors, num_learners = weights.shape
    figure, (axis,) = new_figure(
        1,
        ax,
        (1.6 + 0.8 * num_learners, 1.0 + 0.45 * num_compositors),
        "plot_compositor_weights",
    )
    image = axis.imshow(weights, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    figure.colorbar(image, ax=axis, label="mean |weight|")
    axis.set_xticks(range(num_learners), [f"g{k + 1}" for k in range(num_learners)])
    axis.set_yticks(range(num_compositors), [f"c{m + 1}" for m in range(num_compositors)])
    axis.set_xlabel("learner")
    axis.set_ylabel("compositor")
    axis.set_title(title)
    for m in range(num_compositors):
        for k in range(num_learners):
            value = float(weights[m, k])
            axis.text(
                k,
                m,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="black" if value > 0.6 else "white",
            )
    return use_fallback_fonts(figure)
