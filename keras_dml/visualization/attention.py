"""`plot_attention`: each learner's attention map over the images, on one shared scale (ABE)."""

import numpy as np

from keras_dml.visualization._common import check_labels, display_images, label_name, new_figure
from keras_dml.visualization.fonts import use_fallback_fonts


def attention_value_range(maps, value_range=None):
    """`(vmin, vmax)` shared by every panel: `value_range`, else the maps' overall min and max."""
    if value_range is not None:
        low, high = (float(v) for v in value_range)
        if not high > low:
            raise ValueError(
                f"`value_range` must be (low, high) with high > low. Received: {value_range}"
            )
        return low, high
    low, high = float(np.min(maps)), float(np.max(maps))
    if high - low < 1e-6:  # constant maps: centre the one value in a unit range
        low, high = low - 0.5, high + 0.5
    return low, high


def plot_attention(
    model,
    images,
    labels=None,
    class_names=None,
    reduce="mean",
    maps=None,
    alpha=0.5,
    cmap="jet",
    titles=None,
    cell_size=1.6,
    value_range=None,
    ax=None,
):
    """A grid: one row per image, the image then one overlay per learner, one colour scale.

    Args:
        model: a model with `attention_maps(images, reduce=...)` (e.g. `ABE`), or any model
            when `maps` is given.
        images: float array `[N, H, W, 3]`, raw pixels in [0, 255].
        labels: int array `[N]` or `None`. Class of every image, written on its row. Defaults to
            `None`.
        class_names: sequence of str. Names of the labels. Defaults to `None`.
        reduce: `"mean"` or a channel index, for `model.attention_maps`. Defaults to `"mean"`.
        maps: float array `[N, M, H, W]` to draw instead of the model's. Defaults to `None`.
        alpha: float. Opacity of the map over the image. Defaults to `0.5`.
        cmap: str. Matplotlib colormap of the maps. Defaults to `"jet"`.
        titles: sequence of M str. Column titles. Defaults to `"learner 1"`, ...
        cell_size: float. Size of one grid cell in inches. Defaults to `1.6`.
        value_range: `(low, high)` of the colour scale. Defaults to `None` (the maps' range).
        ax: a sequence of `N * (M + 1)` matplotlib Axes, row-major. Defaults to `None`.

    Returns:
        `matplotlib.figure.Figure`.

    Raises:
        ValueError: maps that do not match the images, no attention masks and no `maps`, or
            labels of the wrong length.
        MissingDependencyError: matplotlib is not installed (`keras-dml[vis]`).

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018, Fig. 6.
    """
    if isinstance(labels, str):
        raise ValueError(
            "plot_attention returns a matplotlib Figure; save it with "
            f"figure.savefig({labels!r}). The third argument is the labels. "
            f"Received: labels={labels!r}"
        )
    images = np.asarray(images, dtype="float32")
    if images.ndim != 4:
        raise ValueError(f"`images` must be [N, H, W, C]. Received shape {images.shape}.")
    if labels is not None:
        labels = check_labels(labels, len(images))
    if maps is None:
        if not hasattr(model, "attention_maps"):
            raise ValueError(
                f"{type(model).__name__} has no attention masks; pass `maps=` (e.g. per-learner "
                "keras_dml.visualization.gradcam.gradcam_maps stacked on axis 1)."
            )
        if not isinstance(reduce, str) and np.ndim(reduce) != 0:
            raise ValueError(f"`reduce` must be 'mean' or one channel. Received: {reduce!r}")
        maps = model.attention_maps(images, reduce=reduce)
    maps = np.asarray(maps, dtype="float32")
    if maps.ndim != 4 or maps.shape[0] != len(images) or maps.shape[2:] != images.shape[1:3]:
        raise ValueError(
            f"`maps` must be [N, M, H, W] = [{len(images)}, M, {images.shape[1]}, "
            f"{images.shape[2]}]. Received shape {maps.shape}."
        )
    num_images, num_learners = maps.shape[:2]
    titles = (
        list(titles) if titles is not None else [f"learner {m + 1}" for m in range(num_learners)]
    )
    if len(titles) != num_learners:
        raise ValueError(f"`titles` needs {num_learners} entries. Received: {titles}")
    low, high = attention_value_range(maps, value_range)

    shown = display_images(images)
    figure, axes = new_figure(
        (num_images, num_learners + 1), ax, (cell_size, cell_size), "plot_attention"
    )
    axes = np.asarray(axes, dtype=object).reshape(num_images, num_learners + 1)
    overlay = None
    for row in range(num_images):
        axes[row, 0].imshow(shown[row])
        for m in range(num_learners):
            axis = axes[row, m + 1]
            axis.imshow(shown[row])
            overlay = axis.imshow(maps[row, m], cmap=cmap, alpha=alpha, vmin=low, vmax=high)
        for axis in axes[row]:
            axis.set_xticks([])
            axis.set_yticks([])
        if labels is not None:
            axes[row, 0].set_ylabel(label_name(labels[row], class_names), fontsize=9)
    axes[0, 0].set_title("image", fontsize=9)
    for m, title in enumerate(titles):
        axes[0, m + 1].set_title(title, fontsize=9)
    colorbar = figure.colorbar(overlay, ax=list(axes[:, 1:].ravel()), shrink=0.8)
    colorbar.set_label("attention (shared scale)")
    return use_fallback_fonts(figure)
