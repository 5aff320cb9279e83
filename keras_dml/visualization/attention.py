"""`plot_attention`: a grid of images and each learner's attention map (ABE, Fig. 6)."""

import os

import numpy as np

from keras_dml.utils import optional_import


def plot_attention(
    model,
    images,
    path,
    reduce="mean",
    maps=None,
    alpha=0.5,
    cmap="jet",
    titles=None,
    cell_size=2.0,
    normalize=True,
):
    """Writes a PNG grid: one row per image, the image then one overlay column per learner.

    Args:
        model: a model with `attention_maps(images, reduce=...)` (e.g. `keras_dml.models.ABE`),
            or any model when `maps` is given.
        images: float array `[N, H, W, 3]`, raw pixels in [0, 255].
        path: str. Output PNG path (folders are created).
        reduce: `"mean"` or one channel index, passed to `model.attention_maps`.
            Defaults to `"mean"` (the bottom row of Fig. 6).
        maps: float array `[N, M, H, W]` in [0, 1] to draw instead of the model's attention
            maps, e.g. stacked `gradcam_maps` of each learner (works for `MHeads` too).
            Defaults to `None`.
        alpha: float. Opacity of the map over the image. Defaults to `0.5`.
        cmap: str. Matplotlib colormap of the maps. Defaults to `"jet"`.
        titles: sequence of M str. Column titles. Defaults to `"learner 1"`, ...
        cell_size: float. Size of one grid cell in inches. Defaults to `2.0`.
        normalize: bool. Stretch each map to [0, 1] before drawing (sigmoid masks averaged
            over channels often span a narrow range). Defaults to `True`.

    Returns:
        str, the written path.

    Raises:
        ValueError: for maps whose shape does not match the images.
        MissingDependencyError: when matplotlib is not installed (`pip install keras-dml[vis]`).

    Examples:
    >>> plot_attention(abe_model, images[:4], "attention.png")  # doctest: +SKIP

    References:
        Kim et al., "Attention-based Ensemble for Deep Metric Learning", ECCV 2018, Fig. 6.
    """
    optional_import("matplotlib", feature="plot_attention")
    figure_module = optional_import("matplotlib.figure", feature="plot_attention")
    backend = optional_import("matplotlib.backends.backend_agg", feature="plot_attention")

    images = np.asarray(images, dtype="float32")
    if images.ndim != 4:
        raise ValueError(f"`images` must be [N, H, W, C]. Received shape {images.shape}.")
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
    if normalize:
        low = maps.min(axis=(2, 3), keepdims=True)
        span = maps.max(axis=(2, 3), keepdims=True) - low
        maps = np.where(span > 1e-12, (maps - low) / np.maximum(span, 1e-12), 0.5)
    titles = (
        list(titles) if titles is not None else [f"learner {m + 1}" for m in range(num_learners)]
    )
    if len(titles) != num_learners:
        raise ValueError(f"`titles` needs {num_learners} entries. Received: {titles}")

    shown = np.clip(images / 255.0, 0.0, 1.0)
    if shown.shape[-1] == 1:
        shown = np.repeat(shown, 3, axis=-1)
    figure = figure_module.Figure(
        figsize=(cell_size * (num_learners + 1), cell_size * num_images), dpi=100
    )
    backend.FigureCanvasAgg(figure)
    axes = figure.subplots(num_images, num_learners + 1, squeeze=False)
    for row in range(num_images):
        axes[row, 0].imshow(shown[row])
        for m in range(num_learners):
            axis = axes[row, m + 1]
            axis.imshow(shown[row])
            axis.imshow(maps[row, m], cmap=cmap, alpha=alpha, vmin=0.0, vmax=1.0)
        for axis in axes[row]:
            axis.set_xticks([])
            axis.set_yticks([])
    axes[0, 0].set_title("image")
    for m, title in enumerate(titles):
        axes[0, m + 1].set_title(title)
    figure.tight_layout()
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    figure.savefig(path, format="png")
    return path
